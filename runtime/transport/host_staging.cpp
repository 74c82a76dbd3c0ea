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

std::size_t span_bytes(int count, MPI_Datatype datatype) {
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  PMPI_Type_get_extent(datatype, &lower_bound, &extent);
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(extent);
}

} // namespace

RootedRole rooted_role(int root, MPI_Comm comm) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter != 0) {
    const bool root_side = root == MPI_ROOT;
    return {root_side, root >= 0, root >= 0};
  }
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  return {me == root, true, me != root};
}

void* pinned_staging_buffer(bool send_side, std::size_t bytes) noexcept {
  return staging_buffer(send_side).reserve(bytes);
}

contract::DeviceStagingOps device_staging_ops() noexcept {
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
  const std::size_t bytes = span_bytes(count, datatype);
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

StagedCall baseline_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          bool cuda_aware) noexcept {
  if (cuda_aware || count <= 0 || !on_device(buffer)) {
    return {PMPI_Bcast(buffer, count, datatype, root, comm), false, 0};
  }
  const RootedRole role = rooted_role(root, comm);
  const std::size_t bytes = span_bytes(count, datatype);
  void* staged = staging_buffer(false).reserve(bytes);
  if (staged == nullptr) {
    return {MPI_ERR_NO_MEM, true, 0};
  }
  if (role.is_root) {
    cudaMemcpy(staged, buffer, bytes, cudaMemcpyDefault);
  }
  const int rc = PMPI_Bcast(staged, count, datatype, root, comm);
  if (role.receives) {
    cudaMemcpy(buffer, staged, bytes, cudaMemcpyDefault);
  }
  return {rc, true, bytes};
}

StagedCall baseline_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           int root, MPI_Comm comm, bool cuda_aware) noexcept {
  const RootedRole role = rooted_role(root, comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const bool receive_device = role.is_root && on_device(recvbuf);
  const bool send_device = role.sends && !in_place && on_device(sendbuf);
  if (cuda_aware || count <= 0 || (!receive_device && !send_device)) {
    return {PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm), false, 0};
  }
  const std::size_t bytes = span_bytes(count, datatype);
  void* received = receive_device ? staging_buffer(false).reserve(bytes) : recvbuf;
  const void* sent = send_device ? staging_buffer(true).reserve(bytes) : sendbuf;
  if (received == nullptr || sent == nullptr) {
    return {MPI_ERR_NO_MEM, true, 0};
  }
  if (send_device) {
    cudaMemcpy(const_cast<void*>(sent), sendbuf, bytes, cudaMemcpyDefault);
  } else if (in_place && receive_device) {
    cudaMemcpy(received, recvbuf, bytes, cudaMemcpyDefault);
  }
  const int rc = PMPI_Reduce(sent, received, count, datatype, op, root, comm);
  if (receive_device) {
    cudaMemcpy(recvbuf, received, bytes, cudaMemcpyDefault);
  }
  return {rc, true, bytes};
}

} // namespace commlens::runtime
