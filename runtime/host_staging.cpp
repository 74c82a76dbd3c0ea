#include "host_staging.hpp"

#include "device_buffer.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace commlens::runtime {

namespace {

// One pinned buffer per thread, grown on demand and kept: pinning is expensive, and host staging
// with pageable memory would measure the pager rather than the path. Per thread, not per process:
// two threads in collectives on different communicators must not wait for each other's buffer.
class PinnedStagingBuffer {
public:
  void* reserve(std::size_t bytes) {
    if (bytes > capacity_) {
      if (memory_ != nullptr) {
        cudaFreeHost(memory_);
      }
      memory_ = nullptr;
      capacity_ = 0;
      if (cudaMallocHost(&memory_, bytes) != cudaSuccess) {
        memory_ = nullptr;
        return nullptr;
      }
      capacity_ = bytes;
    }
    return memory_;
  }

private:
  void* memory_ = nullptr;
  std::size_t capacity_ = 0;
};

PinnedStagingBuffer& staging_buffer() {
  thread_local PinnedStagingBuffer buffer;
  return buffer;
}

} // namespace

bool mpi_is_cuda_aware() noexcept {
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  return query != nullptr && query() == 1;
}

StagedCall baseline_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, bool cuda_aware) noexcept {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool device = on_device(recvbuf) || (!in_place && on_device(sendbuf));
  if (!device || cuda_aware || count <= 0) {
    return {PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm), false, 0};
  }
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  PMPI_Type_get_extent(datatype, &lower_bound, &extent);
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(extent);
  void* host = staging_buffer().reserve(bytes);
  if (host == nullptr) {
    return {MPI_ERR_NO_MEM, true, 0};
  }
  // The whole buffer goes through the host copy in place, whichever of the two is on the device.
  cudaMemcpy(host, in_place ? recvbuf : sendbuf, bytes, cudaMemcpyDefault);
  const int rc = PMPI_Allreduce(MPI_IN_PLACE, host, count, datatype, op, comm);
  cudaMemcpy(recvbuf, host, bytes, cudaMemcpyDefault);
  return {rc, true, bytes};
}

} // namespace commlens::runtime
