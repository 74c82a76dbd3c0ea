// Device point-to-point, the receive path: where a receive lands (the user's buffer or a pinned
// image), receives the call completes itself or leaves to wait/test, messages a probe kept, and
// Sendrecv.
#include "handle_map.hpp"
#include "point_to_point/call_outcome.hpp"
#include "point_to_point/completed_request.hpp"
#include "point_to_point/point_to_point.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

void PointToPoint::finish_receive_record(RuntimeOp record, const ReceiveOutcome& outcome) {
  record.implementation = outcome.rendezvous ? Implementation::IpcRendezvous : Implementation::MpiHostStaged;
  record.algorithm = outcome.striped      ? "ipc_rendezvous_striped"
                     : outcome.rendezvous ? "ipc_rendezvous"
                                          : "host_staged";
  record.decision = outcome.rendezvous ? "runtime" : "fallback";
  record.reason = outcome.rendezvous ? outcome.reason : "the sender sent the message itself";
  striped_receives_ += outcome.striped ? 1 : 0;
  record.bytes = outcome.bytes;
  record.bytes_peer = outcome.rendezvous ? outcome.bytes - outcome.bytes_host : 0;
  record.bytes_host = outcome.bytes_host;
  record.ipc_opens = outcome.ipc_opens;
  record.chunks = outcome.chunks;
  record.streams = outcome.streams;
  record.end_ns = host_.now_ns();
  records_.add(std::move(record));
}

int PointToPoint::receive_now(void* buf, int count, MPI_Datatype datatype, const ProbedMessage* kept,
                              const std::function<int(void*, MPI_Status*)>& from_mpi, const CallContext& call,
                              std::uint64_t start_ns, MPI_Status* status, std::uint8_t* implementation) {
  PostedReceive posted;
  if (!receiver_.prepare(posted, buf, count, datatype, on_device(buf))) {
    return report_error(call.comm, MPI_ERR_NO_MEM); // MPI cannot read a device pointer
  }
  ReceiveOutcome outcome;
  if (kept != nullptr) {
    outcome = receiver_.finish_probed(posted, *kept, status);
  } else {
    const int rc = from_mpi(posted.location(), status);
    if (rc != MPI_SUCCESS) {
      return rc;
    }
    outcome = receiver_.finish(posted, status);
  }
  if (posted.device || outcome.rendezvous) {
    *implementation =
        implementation_id(outcome.rendezvous ? Implementation::IpcRendezvous : Implementation::MpiHostStaged);
    finish_receive_record(start_record(call, 0, start_ns), outcome);
  }
  return report_error(call.comm, outcome.rc);
}

int PointToPoint::receive_later(void* buf, int count, MPI_Datatype datatype, const ProbedMessage* kept,
                                const std::function<int(void*, MPI_Request*)>& post, const CallContext& call,
                                std::uint64_t start_ns, MPI_Request* request, std::uint8_t* implementation,
                                bool persistent) {
  if (kept != nullptr) {
    MPI_Status status;
    kept->report(&status);
    status.MPI_ERROR = receive_now(buf, count, datatype, kept, {}, call, start_ns, &status, implementation);
    return completed_request(status, request); // a wait on it returns the receive's error
  }
  PostedReceive posted;
  if (!receiver_.prepare(posted, buf, count, datatype, on_device(buf))) {
    return report_error(call.comm, MPI_ERR_NO_MEM); // MPI cannot read a device pointer
  }
  // Too small for a header and on the host: nothing to finish.
  if (!posted.device && posted.layout.bytes < sizeof(RendezvousHeader)) {
    return post(buf, request);
  }
  const int rc = post(posted.location(), request);
  if (rc == MPI_SUCCESS) {
    if (posted.device) {
      *implementation = implementation_id(Implementation::MpiHostStaged);
    }
    std::lock_guard lock(mutex_);
    pending_receives_.emplace(
        contract::handle_key(*request),
        PendingReceive{std::move(posted), start_record(call, 0, start_ns), call.comm, persistent});
    ++pending_;
  }
  return rc;
}

int PointToPoint::recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                       const CallContext& call, MPI_Status* status, std::uint8_t* implementation) {
  const std::uint64_t start_ns = host_.now_ns();
  sender_.progress();
  MPI_Status local_status;
  MPI_Status* const status_out = status == MPI_STATUS_IGNORE ? &local_status : status;
  if (source == MPI_PROC_NULL) {
    return PMPI_Recv(buf, count, datatype, source, tag, call.comm, status_out);
  }
  // A kept message is in hand, or still in MPI behind its handle.
  std::optional<ProbedMessage> kept = probed_.take(source, tag, call.comm);
  return receive_now(
      buf, count, datatype, kept && kept->received() ? &*kept : nullptr,
      [&](void* location, MPI_Status* out) {
        return kept ? PMPI_Mrecv(location, count, datatype, &kept->in_mpi, out)
                    : PMPI_Recv(location, count, datatype, source, tag, call.comm, out);
      },
      call, start_ns, status_out, implementation);
}

int PointToPoint::irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                        const CallContext& call, MPI_Request* request, std::uint8_t* implementation) {
  const std::uint64_t start_ns = host_.now_ns();
  sender_.progress();
  if (source == MPI_PROC_NULL) {
    return PMPI_Irecv(buf, count, datatype, source, tag, call.comm, request);
  }
  std::optional<ProbedMessage> kept = probed_.take(source, tag, call.comm);
  return receive_later(
      buf, count, datatype, kept && kept->received() ? &*kept : nullptr,
      [&](void* location, MPI_Request* posted) {
        return kept ? PMPI_Imrecv(location, count, datatype, &kept->in_mpi, posted)
                    : PMPI_Irecv(location, count, datatype, source, tag, call.comm, posted);
      },
      call, start_ns, request, implementation);
}

// Not for a kept message: a persistent receive matches only once started, which the runtime does not
// see (a probe before MPI_Start of the same envelope may keep the message it should get).
int PointToPoint::recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                            const CallContext& call, MPI_Request* request, std::uint8_t* implementation) {
  if (source == MPI_PROC_NULL) {
    return PMPI_Recv_init(buf, count, datatype, source, tag, call.comm, request);
  }
  return receive_later(
      buf, count, datatype, nullptr,
      [&](void* location, MPI_Request* posted) {
        return PMPI_Recv_init(location, count, datatype, source, tag, call.comm, posted);
      },
      call, host_.now_ns(), request, implementation, true);
}

int PointToPoint::mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                        const CallContext& call, MPI_Status* status, std::uint8_t* implementation) {
  const std::uint64_t start_ns = host_.now_ns();
  sender_.progress();
  MPI_Status local_status;
  MPI_Status* const status_out = status == MPI_STATUS_IGNORE ? &local_status : status;
  if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL) {
    return PMPI_Mrecv(buf, count, datatype, message, status_out);
  }
  const RedeemedMessage redeemed = probed_.redeem(message);
  const CallContext context = in_message_comm(call, redeemed);
  return receive_now(
      buf, count, datatype, redeemed.message ? &*redeemed.message : nullptr,
      [&](void* location, MPI_Status* out) { return PMPI_Mrecv(location, count, datatype, message, out); },
      context, start_ns, status_out, implementation);
}

int PointToPoint::imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                         const CallContext& call, MPI_Request* request, std::uint8_t* implementation) {
  const std::uint64_t start_ns = host_.now_ns();
  sender_.progress();
  if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL) {
    return PMPI_Imrecv(buf, count, datatype, message, request);
  }
  const RedeemedMessage redeemed = probed_.redeem(message);
  const CallContext context = in_message_comm(call, redeemed);
  return receive_later(
      buf, count, datatype, redeemed.message ? &*redeemed.message : nullptr,
      [&](void* location, MPI_Request* posted) {
        return PMPI_Imrecv(location, count, datatype, message, posted);
      },
      context, start_ns, request, implementation);
}

int PointToPoint::sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           const CallContext& call, MPI_Status* status, std::uint8_t* implementation) {
  MPI_Request send_request = MPI_REQUEST_NULL;
  std::uint8_t send_implementation = 0;
  int rc = sendbuf != nullptr
               ? send(sendbuf, sendcount, sendtype, dest, sendtag, call, &send_request, &send_implementation)
               : send_host_copy(recvbuf, recvcount, recvtype, dest, sendtag, call, &send_request);
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  rc = recv(recvbuf, recvcount, recvtype, source, recvtag, call, status, implementation);
  MPI_Status send_status;
  const std::uint64_t send_key = contract::handle_key(send_request);
  const int send_rc = PMPI_Wait(&send_request, &send_status);
  finish_request(send_key, &send_status);
  if (*implementation == 0) {
    *implementation = send_implementation;
  }
  return rc != MPI_SUCCESS ? rc : send_rc;
}

} // namespace commlens::runtime
