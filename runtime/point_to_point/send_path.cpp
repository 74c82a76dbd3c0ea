// Device point-to-point, the send path: the rendezvous or a staged host copy per message, in each
// of MPI's send modes, persistent sends and their starts.
#include "handle_map.hpp"
#include "point_to_point/call_outcome.hpp"
#include "point_to_point/point_to_point.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstring>

namespace commlens::runtime {

// COMMLENS_RUNTIME=ab: the rendezvous and the host path take turns per message signature, on the
// sending side (the receiver handles whichever arrives).
bool PointToPoint::rendezvous_turn(int count, MPI_Datatype datatype) {
  if (mode_ != RuntimeMode::AB) {
    return true;
  }
  return ab_.runtime_turn(count, datatype);
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
    pending_sends_.emplace(contract::handle_key(*request), PendingSend{.image = std::move(image)});
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
    record.reason = fmt::format("below {} KiB: the host path", kRendezvousMinBytes >> 10);
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
  pending_sends_.emplace(contract::handle_key(*request),
                         PendingSend{{}, std::move(stored), header.slot, header.bytes});
  ++pending_;
  return rc;
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
    persistent_sends_.emplace(contract::handle_key(*request),
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
      const auto found = persistent_sends_.find(contract::handle_key(requests[index]));
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

} // namespace commlens::runtime
