#include "transport/host_staging.hpp"

#include "transport/device_buffer.hpp"

#include <cuda.h>
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

// The receive side's staging buffer, and the send side's for calls that are not in place.
PinnedStagingBuffer& staging_buffer(bool send_side) {
  thread_local PinnedStagingBuffer receive;
  thread_local PinnedStagingBuffer send;
  return send_side ? send : receive;
}

} // namespace

void* pinned_staging_buffer(bool send_side, std::size_t bytes) noexcept {
  return staging_buffer(send_side).reserve(bytes);
}

pmpi::DeviceStagingOps device_staging_ops() noexcept {
  return {
      .on_device = on_device,
      .allocation =
          [](const void* buffer, const void** base, std::size_t* bytes) noexcept {
            CUdeviceptr start = 0;
            if (cuMemGetAddressRange(&start, bytes, reinterpret_cast<CUdeviceptr>(buffer)) != CUDA_SUCCESS) {
              return false;
            }
            *base = reinterpret_cast<const void*>(start);
            return true;
          },
      .allocate_pinned = [](std::size_t bytes) noexcept -> void* {
        void* memory = nullptr;
        if (cudaHostAlloc(&memory, bytes, cudaHostAllocPortable) != cudaSuccess) {
          cudaGetLastError();
          return nullptr;
        }
        return memory;
      },
      .free_pinned = [](void* memory) noexcept { cudaFreeHost(memory); },
      .copy = copy_on_legacy_stream,
  };
}

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
  // The call as the program made it, on pinned host copies: in place stays in place, otherwise the
  // send buffer is staged apart (an inter-communicator allows nothing else).
  void* received = pinned_staging_buffer(false, bytes);
  void* sent = in_place ? MPI_IN_PLACE : pinned_staging_buffer(true, bytes);
  if (received == nullptr || sent == nullptr) {
    return {MPI_ERR_NO_MEM, true, 0};
  }
  cudaMemcpy(in_place ? received : sent, in_place ? recvbuf : sendbuf, bytes, cudaMemcpyDefault);
  const int rc = PMPI_Allreduce(sent, received, count, datatype, op, comm);
  cudaMemcpy(recvbuf, received, bytes, cudaMemcpyDefault);
  return {rc, true, bytes};
}

} // namespace commlens::runtime
