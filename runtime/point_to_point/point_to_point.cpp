#include "point_to_point/point_to_point.hpp"

#include "point_to_point/completed_request.hpp"
#include "transport/device_buffer.hpp"
#include "handle_map.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstring>

namespace commlens::runtime {

namespace {

// Enough for a 1 GiB message's image: staging that pins anew per message measures cudaMallocHost.
constexpr std::size_t kCachedPinnedBytes = std::size_t{1} << 30;

std::uint8_t implementation_id(Implementation implementation) {
  return static_cast<std::uint8_t>(implementation);
}

// An error the runtime itself finds (no pinned memory, a failed copy, a truncated rendezvous) goes
// to the communicator's error handler, as MPI's own errors do: fatal unless the program chose
// MPI_ERRORS_RETURN.
int report_error(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS) {
    PMPI_Comm_call_errhandler(comm, rc);
  }
  return rc;
}

// The size from which a waiting sender offers its messages for striping: none when the share is 0.
std::uint64_t stripe_from(const StripeSettings& stripe) {
  return stripe.forced_percent.value_or(stripe.table.host_percent) > 0 ? stripe.table.min_bytes : 0;
}

} // namespace

PointToPoint::PointToPoint(const pmpi::CudaPluginHost& host, RuntimeMode mode, IpcHandleCache& cache,
                           RuntimeRecords& records, const StripeSettings& stripe)
    : host_(host), mode_(mode), stripe_(stripe), records_(records),
      pinned_(PoolMemory::PinnedHost, kCachedPinnedBytes), peers_(*host.runtime_channel),
      rings_(*host.runtime_channel),
      sender_(*host.runtime_channel, peers_, cache, pinned_, rings_, stripe_from(stripe)),
      receiver_(*host.runtime_channel, cache, pinned_, rings_, stripe, host.runtime_background_opens),
      probed_([this](std::span<const unsigned char> bytes) { return receiver_.recognise(bytes); },
              sizeof(RendezvousHeader),
              [this](MPI_Comm comm, int source) { return peers_.on_this_node(comm, source); }) {}

RuntimeOp PointToPoint::start_record(const CallContext& call, std::uint64_t bytes,
                                     std::uint64_t start_ns) const {
  RuntimeOp record;
  record.call_id = call.call_id;
  record.function = call.function;
  record.comm_id = host_.communicator_id(call.comm);
  record.start_ns = start_ns;
  record.bytes = bytes;
  return record;
}

// COMMLENS_RUNTIME=ab: the rendezvous and the host path take turns per message signature, on the
// sending side (the receiver handles whichever arrives).
bool PointToPoint::rendezvous_turn(int count, MPI_Datatype datatype) {
  if (mode_ != RuntimeMode::AB) {
    return true;
  }
  std::lock_guard lock(mutex_);
  return ab_counters_[{count, datatype}]++ % 2 == 0;
}

int SendTarget::pmpi_send(const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) const {
  using Blocking = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  using Nonblocking = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  static constexpr Blocking kBlocking[] = {PMPI_Send, PMPI_Ssend, PMPI_Rsend, PMPI_Bsend};
  static constexpr Nonblocking kNonblocking[] = {PMPI_Isend, PMPI_Issend, PMPI_Irsend, PMPI_Ibsend};
  const auto index = static_cast<std::size_t>(mode);
  return request == nullptr ? kBlocking[index](buf, count, datatype, dest, tag, comm)
                            : kNonblocking[index](buf, count, datatype, dest, tag, comm, request);
}

int SendTarget::pmpi_send_init(const void* buf, int count, MPI_Datatype datatype,
                               MPI_Request* request) const {
  using Init = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  static constexpr Init kInit[] = {PMPI_Send_init, PMPI_Ssend_init, PMPI_Rsend_init, PMPI_Bsend_init};
  return kInit[static_cast<std::size_t>(mode)](buf, count, datatype, dest, tag, comm, request);
}

int PointToPoint::staged_send(const void* buf, int count, MPI_Datatype datatype, const MessageLayout& layout,
                              const SendTarget& target, MPI_Request* request, RuntimeOp& record) {
  const MPI_Comm comm = target.comm;
  record.implementation = Implementation::MpiHostStaged;
  record.algorithm = "host_staged";
  PooledBuffer image = pinned_.acquire(layout.span);
  if (!image) {
    record.reason = "no pinned host memory for the staging copy";
    return report_error(comm, MPI_ERR_NO_MEM);
  }
  if (cudaMemcpy(image.data(), static_cast<const char*>(buf) + layout.span_start, layout.span,
                 cudaMemcpyDeviceToHost) != cudaSuccess) {
    cudaGetLastError();
    record.reason = "CUDA error copying the message to the host";
    return report_error(comm, MPI_ERR_OTHER);
  }
  record.bytes_host = layout.bytes;
  return send_from_copy(std::move(image), layout, count, datatype, target, request);
}

// The message laid out as `layout` in its host copy `image`; a nonblocking send keeps the copy
// until its request completes.
int PointToPoint::send_from_copy(PooledBuffer image, const MessageLayout& layout, int count,
                                 MPI_Datatype datatype, const SendTarget& target, MPI_Request* request) {
  void* location = static_cast<char*>(image.data()) - layout.span_start;
  const int rc = target.pmpi_send(location, count, datatype, request);
  if (rc == MPI_SUCCESS && request != nullptr) {
    std::lock_guard lock(mutex_);
    pending_sends_.emplace(pmpi::handle_key(*request), PendingSend{.image = std::move(image)});
    ++pending_;
  }
  return rc;
}

int PointToPoint::send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                       const CallContext& call, MPI_Request* request, std::uint8_t* implementation,
                       SendMode mode) {
  const std::uint64_t start_ns = host_.now_ns();
  sender_.progress();
  const SendTarget target{dest, tag, call.comm, mode};
  // Host buffers go to MPI untouched: one driver query, no datatype queries.
  const bool to_mpi = dest == MPI_PROC_NULL || !on_device(buf);
  const MessageLayout layout = to_mpi ? MessageLayout{} : message_layout(count, datatype);
  if (to_mpi || !layout.supported || layout.span == 0) {
    return target.pmpi_send(buf, count, datatype, request);
  }
  RuntimeOp record = start_record(call, layout.bytes, start_ns);
  record.decision = "fallback";
  int rc = MPI_SUCCESS;
  RendezvousHeader header;
  bool rendezvous = false;
  if (!layout.contiguous) {
    record.reason = "non-contiguous datatype";
  } else if (layout.bytes < kRendezvousMinBytes) {
    record.reason = "below 64 KiB: the host path";
  } else if (!rendezvous_turn(count, datatype)) {
    record.decision = "ab_baseline";
  } else if (const int dest_world = peers_.world_rank(call.comm, dest); dest_world < 0) {
    record.reason = "receiver outside MPI_COMM_WORLD or inter-communicator";
  } else {
    // Striping from the start needs the sender in settle() right after the header: not so while
    // PMPI_Ssend waits for the receiver's match (settle() offers it later).
    const bool settles_next = request == nullptr && mode != SendMode::Synchronous;
    rendezvous = sender_.offer(buf, layout.bytes, dest_world, settles_next, &header, &record.reason);
  }
  if (rendezvous) {
    record.decision = "runtime";
    record.implementation = Implementation::IpcRendezvous;
    // A nonblocking send's row is written before its wait settles it: as offered, one peer copy.
    std::uint64_t host_bytes = 0;
    rc = request == nullptr ? send_rendezvous(header, target, &host_bytes)
                            : isend_rendezvous(header, target, request);
    record.algorithm = host_bytes > 0 ? "ipc_rendezvous_striped" : "ipc_rendezvous";
    striped_sends_ += host_bytes > 0 ? 1 : 0;
    record.bytes_peer = layout.bytes - host_bytes;
    record.bytes_host = host_bytes;
  } else {
    rc = staged_send(buf, count, datatype, layout, target, request, record);
  }
  record.chunks = 1;
  record.streams = 1;
  record.end_ns = host_.now_ns();
  *implementation = implementation_id(record.implementation);
  records_.add(std::move(record));
  return rc;
}

int PointToPoint::send_rendezvous(const RendezvousHeader& header, const SendTarget& target,
                                  std::uint64_t* host_bytes) {
  const int rc = target.pmpi_send(&header, sizeof header, MPI_BYTE, nullptr);
  if (rc != MPI_SUCCESS) {
    sender_.cancel(header.slot);
    return rc;
  }
  return sender_.settle(header.slot, RendezvousSender::patience_for(header.bytes), host_bytes);
}

// The request MPI returns for the header is the user's; its completion settles the hand-over.
int PointToPoint::isend_rendezvous(const RendezvousHeader& header, const SendTarget& target,
                                   MPI_Request* request) {
  auto stored = std::make_unique<RendezvousHeader>(header);
  const int rc = target.pmpi_send(stored.get(), sizeof header, MPI_BYTE, request);
  if (rc != MPI_SUCCESS) {
    sender_.cancel(header.slot);
    return rc;
  }
  std::lock_guard lock(mutex_);
  pending_sends_.emplace(pmpi::handle_key(*request),
                         PendingSend{{}, std::move(stored), header.slot, header.bytes});
  ++pending_;
  return rc;
}

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
        pmpi::handle_key(*request),
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

int PointToPoint::send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                            const CallContext& call, MPI_Request* request, std::uint8_t* implementation,
                            SendMode mode) {
  const SendTarget target{dest, tag, call.comm, mode};
  const MessageLayout layout =
      dest == MPI_PROC_NULL || !on_device(buf) ? MessageLayout{} : message_layout(count, datatype);
  if (!layout.supported || layout.span == 0) {
    return target.pmpi_send_init(buf, count, datatype, request);
  }
  PooledBuffer image = pinned_.acquire(layout.span);
  if (!image) {
    return report_error(call.comm, MPI_ERR_NO_MEM); // MPI cannot read a device pointer
  }
  const int rc =
      target.pmpi_send_init(static_cast<char*>(image.data()) - layout.span_start, count, datatype, request);
  if (rc == MPI_SUCCESS) {
    *implementation = implementation_id(Implementation::MpiHostStaged);
    std::lock_guard lock(mutex_);
    persistent_sends_.emplace(pmpi::handle_key(*request),
                              PersistentSend{buf, layout, std::move(image), call.comm});
    ++pending_;
  }
  return rc;
}

int PointToPoint::start(bool startall, int count, MPI_Request* requests, const CallContext& call,
                        std::uint8_t* implementation) {
  const auto pmpi_start = [&] { return startall ? PMPI_Startall(count, requests) : PMPI_Start(requests); };
  if (pending_.load(std::memory_order_relaxed) == 0) {
    return pmpi_start();
  }
  for (int index = 0; index < count; ++index) {
    const std::uint64_t start_ns = host_.now_ns();
    PersistentSend* staged = nullptr;
    {
      std::lock_guard lock(mutex_);
      const auto found = persistent_sends_.find(pmpi::handle_key(requests[index]));
      staged = found != persistent_sends_.end() ? &found->second : nullptr;
    }
    if (staged == nullptr) {
      continue;
    }
    // The node stays: only MPI_Request_free removes it, which may not race a start of the request.
    RuntimeOp record =
        start_record({call.call_id, call.function, staged->comm}, staged->layout.bytes, start_ns);
    record.implementation = Implementation::MpiHostStaged;
    record.algorithm = "host_staged";
    record.decision = "fallback";
    record.reason = "persistent send: the host path";
    record.bytes_host = staged->layout.bytes;
    record.chunks = 1;
    record.streams = 1;
    const bool copied = copy_on_legacy_stream(
        staged->image.data(), static_cast<const char*>(staged->buf) + staged->layout.span_start,
        staged->layout.span);
    record.end_ns = host_.now_ns();
    records_.add(std::move(record));
    *implementation = implementation_id(Implementation::MpiHostStaged);
    if (!copied) {
      return report_error(staged->comm, MPI_ERR_OTHER);
    }
  }
  return pmpi_start();
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

int PointToPoint::probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  sender_.progress();
  MPI_Status local_status;
  return probed_.probe(source, tag, comm, flag, status == MPI_STATUS_IGNORE ? &local_status : status);
}

int PointToPoint::mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                         MPI_Status* status) {
  sender_.progress();
  MPI_Status local_status;
  return probed_.mprobe(source, tag, comm, flag, message,
                        status == MPI_STATUS_IGNORE ? &local_status : status);
}

// A matched message's receive reports to the message's communicator (MPI_COMM_WORLD for a handle the
// runtime never saw).
CallContext PointToPoint::in_message_comm(const CallContext& call, const RedeemedMessage& redeemed) {
  return {call.call_id, call.function, redeemed.comm != MPI_COMM_NULL ? redeemed.comm : MPI_COMM_WORLD};
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

// The send half of Sendrecv_replace: from a host copy of the buffer, which the receive then
// overwrites (a rendezvous would let the receiver read the buffer after that).
int PointToPoint::send_host_copy(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                                 const CallContext& call, MPI_Request* request) {
  const MessageLayout layout = message_layout(count, datatype);
  const SendTarget target{dest, tag, call.comm, SendMode::Standard};
  if (dest == MPI_PROC_NULL || !layout.supported || layout.span == 0) {
    return target.pmpi_send(buf, count, datatype, request);
  }
  if (on_device(buf)) {
    RuntimeOp record = start_record(call, layout.bytes, host_.now_ns());
    record.decision = "fallback";
    record.reason = "Sendrecv_replace: sent from a copy";
    const int rc = staged_send(buf, count, datatype, layout, target, request, record);
    record.end_ns = host_.now_ns();
    records_.add(std::move(record));
    return rc;
  }
  PooledBuffer copy = pinned_.acquire(layout.span);
  if (!copy) {
    return report_error(call.comm, MPI_ERR_NO_MEM);
  }
  std::memcpy(copy.data(), static_cast<const char*>(buf) + layout.span_start, layout.span);
  return send_from_copy(std::move(copy), layout, count, datatype, target, request);
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
  const std::uint64_t send_key = pmpi::handle_key(send_request);
  const int send_rc = PMPI_Wait(&send_request, &send_status);
  finish_request(send_key, &send_status);
  if (*implementation == 0) {
    *implementation = send_implementation;
  }
  return rc != MPI_SUCCESS ? rc : send_rc;
}

int PointToPoint::finish_request(std::uint64_t request_key, MPI_Status* status) {
  if (pending_.load(std::memory_order_relaxed) == 0) {
    return MPI_SUCCESS;
  }
  std::unique_lock lock(mutex_);
  if (const auto sent = pending_sends_.find(request_key); sent != pending_sends_.end()) {
    const PendingSend finished = std::move(sent->second);
    pending_sends_.erase(sent);
    --pending_;
    lock.unlock();
    return finished.slot < 0 ? MPI_SUCCESS
                             : sender_.settle(finished.slot, RendezvousSender::patience_for(finished.bytes));
  }
  const auto found = pending_receives_.find(request_key);
  if (found == pending_receives_.end()) {
    return MPI_SUCCESS; // a persistent send too: staged at its start, nothing to finish
  }
  if (found->second.persistent) {
    // Stays for the next MPI_Start; only MPI_Request_free (not concurrent with a completion of the
    // same request) erases it, and map nodes do not move.
    PendingReceive& armed = found->second;
    lock.unlock();
    return finish_receive(armed, status);
  }
  PendingReceive pending = std::move(found->second);
  pending_receives_.erase(found);
  --pending_;
  lock.unlock();
  return finish_receive(pending, status);
}

int PointToPoint::finish_receive(PendingReceive& pending, MPI_Status* status) {
  const ReceiveOutcome outcome = receiver_.finish(pending.posted, status);
  if (pending.posted.device || outcome.rendezvous) {
    RuntimeOp record = pending.persistent ? pending.record : std::move(pending.record);
    if (pending.persistent) {
      record.start_ns = host_.now_ns(); // the MPI_Start is not seen: the row times the completion
    }
    finish_receive_record(std::move(record), outcome);
  }
  return report_error(pending.comm, outcome.rc);
}

// MPI no longer uses what was posted under the request: the wrappers keep a request freed in flight
// until MPI completes it (collectors/pmpi/detached_requests.hpp), so images go back to their pools.
void PointToPoint::request_freed(std::uint64_t request_key) {
  std::unique_lock lock(mutex_);
  if (const auto sent = pending_sends_.find(request_key); sent != pending_sends_.end()) {
    PendingSend freed = std::move(sent->second);
    pending_sends_.erase(sent);
    --pending_;
    lock.unlock();
    if (freed.slot >= 0) {
      sender_.settle(freed.slot, std::chrono::nanoseconds(0)); // the user may reuse the buffer now
    }
  } else if (const auto received = pending_receives_.find(request_key); received != pending_receives_.end()) {
    pending_receives_.erase(received);
    --pending_;
  } else if (const auto persistent = persistent_sends_.find(request_key);
             persistent != persistent_sends_.end()) {
    persistent_sends_.erase(persistent);
    --pending_;
  }
}

pmpi::RequestWork PointToPoint::tracks(std::uint64_t request_key) {
  if (pending_.load(std::memory_order_relaxed) == 0) {
    return pmpi::RequestWork::None;
  }
  std::lock_guard lock(mutex_);
  if (pending_sends_.contains(request_key)) {
    return pmpi::RequestWork::Nonblocking;
  }
  if (const auto received = pending_receives_.find(request_key); received != pending_receives_.end()) {
    return received->second.persistent ? pmpi::RequestWork::Persistent : pmpi::RequestWork::Nonblocking;
  }
  return persistent_sends_.contains(request_key) ? pmpi::RequestWork::Persistent : pmpi::RequestWork::None;
}

std::string PointToPoint::striping_summary() {
  const std::uint32_t percent = stripe_.forced_percent.value_or(stripe_.table.host_percent);
  if (percent == 0) {
    return "off (host share 0 in the tuning table; COMMLENS_RUNTIME_HOST_PERCENT sets one)";
  }
  const std::string problem = rings_.problem();
  return fmt::format(
      "{}% over the host path from {} B ({}); rank {} striped {} blocking sends, {} receives{}{}", percent,
      stripe_.table.min_bytes,
      stripe_.forced_percent ? "COMMLENS_RUNTIME_HOST_PERCENT, any two ranks"
                             : "tuning table, ranks on two GPUs",
      host_.world_rank, striped_sends_.load(), striped_receives_.load(), problem.empty() ? "" : "; ",
      problem);
}

void PointToPoint::finalize() {
  sender_.drain();
  host_.set_run_value("runtime_p2p_striping", striping_summary());
  rings_.unpin_all();
  pinned_.trim();
}

} // namespace commlens::runtime
