// Device point-to-point: the runtime's state for it, probes, and the requests it posted that wait/test
// calls finish (the send path: send_path.cpp; the receive path: receive_path.cpp).
#include "point_to_point/point_to_point.hpp"
#include "handle_map.hpp"
#include "point_to_point/call_outcome.hpp"

#include <fmt/format.h>

namespace commlens::runtime {

namespace {

// Enough for a 1 GiB message's image: staging that pins anew per message measures cudaMallocHost.
constexpr std::size_t kCachedPinnedBytes = std::size_t{1} << 30;

// The size from which a waiting sender offers its messages for striping: none when the share is 0.
std::uint64_t stripe_from(const StripeSettings& stripe) {
  return stripe.forced_percent.value_or(stripe.table.host_percent) > 0 ? stripe.table.min_bytes : 0;
}

} // namespace

PointToPoint::PointToPoint(const contract::CudaPluginHost& host, RuntimeMode mode, IpcHandleCache& cache,
                           RuntimeRecords& records, const StripeSettings& stripe)
    : host_(host), mode_(mode), stripe_(stripe), records_(records),
      pinned_(PoolMemory::PinnedHost, kCachedPinnedBytes), peers_(*host.runtime_channel),
      rings_(*host.runtime_channel),
      sender_(*host.runtime_channel, peers_, cache, pinned_, rings_, stripe_from(stripe)),
      receiver_(*host.runtime_channel, cache, pinned_, rings_, stripe, host.runtime.background_opens),
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
// until MPI completes it (collectors/runtime_dispatch/detached_requests.hpp), so images go back to their
// pools.
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

contract::RequestWork PointToPoint::tracks(std::uint64_t request_key) {
  if (pending_.load(std::memory_order_relaxed) == 0) {
    return contract::RequestWork::None;
  }
  std::lock_guard lock(mutex_);
  if (pending_sends_.contains(request_key)) {
    return contract::RequestWork::Nonblocking;
  }
  if (const auto received = pending_receives_.find(request_key); received != pending_receives_.end()) {
    return received->second.persistent ? contract::RequestWork::Persistent
                                       : contract::RequestWork::Nonblocking;
  }
  return persistent_sends_.contains(request_key) ? contract::RequestWork::Persistent
                                                 : contract::RequestWork::None;
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
