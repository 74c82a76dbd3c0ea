#pragma once
// What the wrappers of `runtime` functions (mpi_functions.spec) call instead of PMPI: the GPU
// collective runtime's entry when libcommlens_cuda.so installed one, else PMPI itself. call is
// null while collection is off; the runtime still runs then, it is only not recorded.
#include "call_recording.hpp"
#include "collector_hooks.hpp"

namespace commlens::pmpi::runtime {

inline int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, CallRecording* call) noexcept {
  const auto entry = collector_hooks().runtime.allreduce;
  if (entry == nullptr) [[likely]] {
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  }
  std::uint8_t implementation = 0;
  const int rc = entry(sendbuf, recvbuf, count, datatype, op, comm, call != nullptr ? call->call_id() : 0,
                       &implementation);
  if (call != nullptr) {
    call->set_implementation(implementation);
  }
  return rc;
}

} // namespace commlens::pmpi::runtime
