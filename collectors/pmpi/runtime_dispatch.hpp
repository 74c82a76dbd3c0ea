#pragma once
// What the wrappers of `runtime` functions (mpi_functions.spec) call instead of PMPI: the GPU
// collective runtime's entry when libcommlens_cuda.so installed one, else PMPI itself. call is
// null while collection is off; the runtime still runs then, it is only not recorded.
#include "call_recording.hpp"
#include "collector_hooks.hpp"
#include "detached_requests.hpp"
#include "device_staging.hpp"

namespace commlens::pmpi::runtime {

// Entry: the RuntimeEntries member; Pmpi: the PMPI function taking the same arguments.
template <auto Entry, auto Pmpi, typename... Args>
inline int run(CallRecording* call, Args... args) noexcept {
  const auto entry = collector_hooks().runtime.*Entry;
  if (entry == nullptr) [[likely]] {
    return Pmpi(args...);
  }
  std::uint8_t implementation = 0;
  const int rc = entry(args..., call != nullptr ? call->call_id() : 0, &implementation);
  if (call != nullptr) {
    call->set_implementation(implementation);
  }
  return rc;
}

inline int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, CallRecording* call) noexcept {
  return run<&RuntimeEntries::allreduce, PMPI_Allreduce>(call, sendbuf, recvbuf, count, datatype, op, comm);
}

inline int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    CallRecording* call) noexcept {
  return run<&RuntimeEntries::send, PMPI_Send>(call, buf, count, datatype, dest, tag, comm);
}

inline int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     CallRecording* call) noexcept {
  return run<&RuntimeEntries::ssend, PMPI_Ssend>(call, buf, count, datatype, dest, tag, comm);
}

inline int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     CallRecording* call) noexcept {
  return run<&RuntimeEntries::rsend, PMPI_Rsend>(call, buf, count, datatype, dest, tag, comm);
}

inline int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     CallRecording* call) noexcept {
  return run<&RuntimeEntries::bsend, PMPI_Bsend>(call, buf, count, datatype, dest, tag, comm);
}

inline int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status* status, CallRecording* call) noexcept {
  return run<&RuntimeEntries::recv, PMPI_Recv>(call, buf, count, datatype, source, tag, comm, status);
}

inline int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::isend, PMPI_Isend>(call, buf, count, datatype, dest, tag, comm, request);
}

inline int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::issend, PMPI_Issend>(call, buf, count, datatype, dest, tag, comm, request);
}

inline int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::irsend, PMPI_Irsend>(call, buf, count, datatype, dest, tag, comm, request);
}

inline int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::ibsend, PMPI_Ibsend>(call, buf, count, datatype, dest, tag, comm, request);
}

inline int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::send_init, PMPI_Send_init>(call, buf, count, datatype, dest, tag, comm,
                                                         request);
}

inline int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::ssend_init, PMPI_Ssend_init>(call, buf, count, datatype, dest, tag, comm,
                                                           request);
}

inline int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::rsend_init, PMPI_Rsend_init>(call, buf, count, datatype, dest, tag, comm,
                                                           request);
}

inline int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::bsend_init, PMPI_Bsend_init>(call, buf, count, datatype, dest, tag, comm,
                                                           request);
}

inline int MPI_Start(MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::start, PMPI_Start>(call, request);
}

inline int MPI_Startall(int count, MPI_Request requests[], CallRecording* call) noexcept {
  return run<&RuntimeEntries::startall, PMPI_Startall>(call, count, requests);
}

inline int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::irecv, PMPI_Irecv>(call, buf, count, datatype, source, tag, comm, request);
}

inline int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                        MPI_Comm comm, MPI_Status* status, CallRecording* call) noexcept {
  return run<&RuntimeEntries::sendrecv, PMPI_Sendrecv>(call, sendbuf, sendcount, sendtype, dest, sendtag,
                                                       recvbuf, recvcount, recvtype, source, recvtag, comm,
                                                       status);
}

inline int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                                CallRecording* call) noexcept {
  return run<&RuntimeEntries::sendrecv_replace, PMPI_Sendrecv_replace>(
      call, buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

inline int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Request* request, CallRecording* call) noexcept {
  return run<&RuntimeEntries::recv_init, PMPI_Recv_init>(call, buf, count, datatype, source, tag, comm,
                                                         request);
}

inline int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status, CallRecording* call) noexcept {
  return run<&RuntimeEntries::probe, PMPI_Probe>(call, source, tag, comm, status);
}

inline int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status,
                      CallRecording* call) noexcept {
  return run<&RuntimeEntries::iprobe, PMPI_Iprobe>(call, source, tag, comm, flag, status);
}

inline int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status,
                      CallRecording* call) noexcept {
  return run<&RuntimeEntries::mprobe, PMPI_Mprobe>(call, source, tag, comm, message, status);
}

inline int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                       MPI_Status* status, CallRecording* call) noexcept {
  return run<&RuntimeEntries::improbe, PMPI_Improbe>(call, source, tag, comm, flag, message, status);
}

inline int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
                     CallRecording* call) noexcept {
  return run<&RuntimeEntries::mrecv, PMPI_Mrecv>(call, buf, count, datatype, message, status);
}

inline int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request,
                      CallRecording* call) noexcept {
  return run<&RuntimeEntries::imrecv, PMPI_Imrecv>(call, buf, count, datatype, message, request);
}

// After a wait/test call: `completed` requests completed, the i-th at snapshot index indices[i]
// (indices null: i) with its status statuses[i]. The runtime finishes those it posted, inside the
// call, so the call's time includes that work. `many`: the call reports errors per status
// (MPI_ERR_IN_STATUS) rather than in its return code. Requests whose buffers the wrappers staged
// through host memory (device_staging.hpp) are finished first: their outputs copied to the device.
inline int finish_completed(int rc, const RequestSnapshot& requests, int completed, const int* indices,
                            MPI_Status* statuses, bool many) noexcept {
  if (detached_requests::any()) [[unlikely]] {
    detached_requests::progress();
  }
  const auto finish = collector_hooks().runtime.finish_request;
  const bool staged = staged_requests::any();
  if ((finish == nullptr && !staged) || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) [[likely]] {
    return rc;
  }
  for (int i = 0; i < completed; ++i) {
    if (rc == MPI_ERR_IN_STATUS && statuses[i].MPI_ERROR != MPI_SUCCESS) {
      continue; // not completed (MPI_ERR_PENDING) or failed in MPI already
    }
    const std::uint64_t key = requests.key(indices != nullptr ? indices[i] : i);
    int finished = staged ? staged_requests::completed(key) : MPI_SUCCESS;
    if (finish != nullptr && finished == MPI_SUCCESS) {
      finished = finish(key, &statuses[i]);
    }
    if (finished != MPI_SUCCESS) {
      statuses[i].MPI_ERROR = finished;
      rc = many ? MPI_ERR_IN_STATUS : finished;
    }
  }
  return rc;
}

// MPI_Request_free: a request the runtime or the staging still has work under is kept until MPI
// completes it (detached_requests.hpp); any other is freed after they released what they posted.
inline int free_request(MPI_Request* request) noexcept {
  if (detached_requests::any()) [[unlikely]] {
    detached_requests::progress();
  }
  const std::uint64_t request_key = handle_key(*request);
  if (detached_requests::detach(request)) {
    return MPI_SUCCESS;
  }
  if (staged_requests::any()) [[unlikely]] {
    staged_requests::freed(request_key);
  }
  if (const auto release = collector_hooks().runtime.request_freed) [[unlikely]] {
    release(request_key);
  }
  return PMPI_Request_free(request);
}

} // namespace commlens::pmpi::runtime
