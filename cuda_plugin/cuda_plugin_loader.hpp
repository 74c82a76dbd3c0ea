#pragma once
// Starts the CUDA collectors (libcommlens_cuda.so) when this process can use a GPU; otherwise
// records in the run table why they are off. libcommlens.so keeps no link-time CUDA dependency:
// the driver is probed with dlopen/dlsym only.
#include "commlens/profiler/profiler.hpp"

#include <span>

namespace commlens::pmpi {

// functions: the run's functions table (MPI's, then NCCL's): the names of the NVTX ranges. Reads
// the GPU runtime's settings (contract/runtime_settings.hpp) from the profiler's COMMLENS_* values.
void start_cuda_collectors(Profiler& profiler, std::span<const FunctionDescription> functions);
// The same in a process where MPI is not initialised (a collector of another API started the
// profiler): the CUDA collectors only, since the GPU runtime takes MPI calls and needs MPI to set up.
void start_cuda_collectors_without_runtime(Profiler& profiler,
                                           std::span<const FunctionDescription> functions);
// MPI_Finalize, after the plugin's finalize: frees the runtime's channel (collective).
void stop_runtime_channel();

} // namespace commlens::pmpi
