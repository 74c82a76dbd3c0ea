#pragma once
// Starts the CUDA collectors (libcommlens_cuda.so) when this process can use a GPU; otherwise
// records in the run table why they are off. libcommlens.so keeps no link-time CUDA dependency:
// the driver is probed with dlopen/dlsym only.
#include "commlens/profiler/profiler.hpp"

#include <span>

namespace commlens::pmpi {

// functions: the run's functions table (MPI's, then NCCL's): the names of the NVTX ranges.
void start_cuda_collectors(Profiler& profiler, std::span<const FunctionDescription> functions);
// MPI_Finalize, after the plugin's finalize: frees the runtime's channel (collective).
void stop_runtime_channel();

} // namespace commlens::pmpi
