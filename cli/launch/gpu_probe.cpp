#include "launch/gpu_probe.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <array>

namespace commlens::cli {

GpuProbe probe_gpus() {
  // The driver API's few entry points used here, by their C signatures (CUdevice is an int).
  using Init = int (*)(unsigned);
  using GetCount = int (*)(int*);
  using GetName = int (*)(char*, int, int);
  void* const driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    return {0, "", "no CUDA driver (libcuda.so.1 cannot be loaded)"};
  }
  const auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  const auto get_count = reinterpret_cast<GetCount>(dlsym(driver, "cuDeviceGetCount"));
  const auto get_name = reinterpret_cast<GetName>(dlsym(driver, "cuDeviceGetName"));
  GpuProbe probe;
  if (init == nullptr || get_count == nullptr || get_name == nullptr) {
    probe.problem = "the CUDA driver lacks cuInit, cuDeviceGetCount or cuDeviceGetName";
  } else if (const int error = init(0); error != 0) {
    probe.problem = fmt::format("cuInit failed with CUDA error {} (100: no device)", error);
  } else if (get_count(&probe.count) != 0 || probe.count == 0) {
    probe.count = 0;
    probe.problem = "the CUDA driver sees no device";
  } else {
    std::array<char, 256> name{};
    if (get_name(name.data(), static_cast<int>(name.size()), 0) == 0) {
      probe.name = name.data();
    }
  }
  // The driver stays loaded: unloading it after cuInit is not supported.
  return probe;
}

} // namespace commlens::cli
