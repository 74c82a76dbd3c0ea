// The collectors libcommlens.so links besides the PMPI collector, as its lifecycle sees them
// (collector_registration.hpp): the MPI_T collector, and the loader of libcommlens_cuda.so (the
// CUDA collectors and the GPU runtime), and the NCCL collector, whose functions follow MPI's in the
// functions table.
#include "collector_registration.hpp"
#include "cuda_plugin_loader.hpp"
#include "mpit_collector.hpp"
#include "nccl_recording.hpp"

namespace commlens::pmpi {

std::span<const CollectorLifecycle> linked_collectors() {
  static constexpr CollectorLifecycle kCollectors[] = {
      {.name = "mpit",
       .before_mpi_init = mpit::initialise_mpit_before_mpi,
       .start = mpit::start_mpit_collector,
       .not_started = mpit::release_mpit_without_collector},
      {.name = "cuda",
       .start = start_cuda_collectors,
       .finished = stop_runtime_channel,
       .start_without_mpi = start_cuda_collectors_without_runtime},
      {.name = "nccl",
       .functions = nccl::nccl_function_descriptions,
       .start = nccl::start_nccl_collector,
       .finished = nccl::finish_nccl_collector,
       .start_without_mpi = nccl::start_nccl_collector},
  };
  return kCollectors;
}

} // namespace commlens::pmpi
