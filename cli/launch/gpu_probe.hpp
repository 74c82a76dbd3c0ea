#pragma once
// Whether this machine has a CUDA GPU, asked of the driver (libcuda, loaded at run time: the CLI is
// built without CUDA and must run where there is none).
#include <string>

namespace commlens::cli {

struct GpuProbe {
  int count = 0;       // visible GPUs; 0 when there are none or no driver
  std::string name;    // device 0's name (cudaDeviceProp::name), when count > 0
  std::string problem; // why there are none, when count == 0
};

GpuProbe probe_gpus();

} // namespace commlens::cli
