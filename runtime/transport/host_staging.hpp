#pragma once
// The baseline the runtime is compared against, for device buffers: PMPI directly when the MPI
// library is CUDA-aware, otherwise what Open MPI's coll/accelerator does: copy the device buffers
// to pinned host memory, run PMPI on the host copy, copy the result back.
#include "collector_hooks.hpp"
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

// MPIX_Query_cuda_support() where the library has it (Open MPI, MVAPICH); false otherwise.
bool mpi_is_cuda_aware() noexcept;

struct StagedCall {
  int rc;
  bool staged;              // false: PMPI ran on the user's buffers directly
  std::uint64_t bytes_host; // bytes copied each way through host memory
};

// What the wrappers' host staging of the calls without a runtime algorithm needs from CUDA
// (collectors/runtime_dispatch/device_staging.hpp).
contract::DeviceStagingOps device_staging_ops() noexcept;

// The calling thread's pinned staging buffer for the send or the receive side, grown to at least
// `bytes` and kept (null when pinning failed): what every baseline stages through.
void* pinned_staging_buffer(bool send_side, std::size_t bytes) noexcept;

// Which buffers of a rooted collective a rank uses: on an intra-communicator the root sends (bcast)
// or receives (reduce), every rank the other way; on an inter-communicator the root's group names
// its root MPI_ROOT and the rest MPI_PROC_NULL (no buffer), the other group the remote root's rank.
struct RootedRole {
  bool is_root;  // bcast's source, reduce's destination
  bool sends;    // bcast: the root; reduce: every rank that contributes
  bool receives; // bcast: every rank but the root
};

RootedRole rooted_role(int root, MPI_Comm comm);

// The rooted collectives' baselines: each rank stages its own device buffers (a rank's buffers
// may be on the device while another's are in host memory).
StagedCall baseline_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          bool cuda_aware) noexcept;
StagedCall baseline_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           int root, MPI_Comm comm, bool cuda_aware) noexcept;
StagedCall baseline_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, bool cuda_aware) noexcept;

} // namespace commlens::runtime
