#include "point_to_point_matcher.hpp"

#include <algorithm>
#include <limits>

namespace commlens::analysis::detail {
namespace {

// Every so many calls the waits of completion calls that ended before the scan's position are
// added: every send they could still pair with started before they ended. The scan goes in start
// order across lanes; the margin covers what the ranks' clock alignment leaves.
constexpr std::int64_t kFlushEvery = 4096;
constexpr std::int64_t kFlushMarginNs = 10'000'000;

// The call the record's side blocks in: the call itself, or the wait that completed its request.
void blocks_in(PointToPointMatcher::Record& record, const ScannedCall& call) {
  record.blocked_known = true;
  record.block_call = call.id;
  record.block_function = call.function_id;
  record.phase = call.phase;
  record.block_start_ns = call.start_ns;
  record.block_end_ns = call.end_ns;
}

} // namespace

void PointToPointMatcher::add(const ScannedCall& call, PointToPointRole role) {
  if (++scanned_ % kFlushEvery == 0)
    flush_completions(call.start_ns - kFlushMarginNs);
  const int rank = call.rank;
  const auto peer = static_cast<int>(call.peer);
  const auto comm = call.comm_id;
  const bool has_peer = call.peer >= 0;
  const Channel to_peer{rank, peer, call.tag, comm};
  const Channel from_peer{peer, rank, call.tag, comm};
  switch (role) {
  case PointToPointRole::Completion:
    complete(call);
    return;
  case PointToPointRole::PersistentSend:
    if (has_peer)
      flag_pair(rank, peer, comm);
    return;
  case PointToPointRole::PersistentReceive:
    if (has_peer)
      flag_pair(peer, rank, comm);
    else
      flag_receiver(rank, comm);
    return;
  case PointToPointRole::MatchedReceive:
    flag_receiver(rank, comm);
    return;
  case PointToPointRole::SendReceive:
    flag_receiver(rank, comm);
    if (has_peer)
      enqueue(to_peer, true, {call.start_ns, rank, kNoRecord});
    return;
  case PointToPointRole::Send:
    if (has_peer)
      enqueue(to_peer, true, {call.start_ns, rank, kNoRecord});
    return;
  case PointToPointRole::BlockingSend:
  case PointToPointRole::NonblockingSsend: {
    if (!has_peer)
      return;
    const bool blocked_now = role == PointToPointRole::BlockingSend;
    const bool measured = blocked_now || call.completion_call_id.has_value();
    enqueue(to_peer, true,
            {call.start_ns, rank,
             measured ? record(call, WaitKind::LateReceiver, comm, blocked_now) : kNoRecord});
    return;
  }
  case PointToPointRole::Receive:
  case PointToPointRole::NonblockingReceive: {
    if (!has_peer)
      return;
    if (call.tag < 0) { // MPI_ANY_TAG: the trace does not say which of the peer's messages came
      flag_pair(peer, rank, comm);
      return;
    }
    const bool blocked_now = role == PointToPointRole::Receive;
    const bool measured = blocked_now || call.completion_call_id.has_value();
    enqueue(
        from_peer, false,
        {call.start_ns, rank, measured ? record(call, WaitKind::LateSender, comm, blocked_now) : kNoRecord});
    return;
  }
  }
}

std::int32_t PointToPointMatcher::record(const ScannedCall& call, WaitKind kind, std::int64_t comm_id,
                                         bool blocked_now) {
  std::int32_t slot;
  if (free_records_.empty()) {
    slot = static_cast<std::int32_t>(records_.size());
    records_.emplace_back();
  } else {
    slot = free_records_.back();
    free_records_.pop_back();
  }
  auto& record = records_[static_cast<std::size_t>(slot)];
  record = Record();
  record.kind = kind;
  record.comm_id = comm_id;
  record.rank = call.rank;
  record.queued = true; // the caller queues it at once
  if (blocked_now) {
    blocks_in(record, call);
  } else {
    record.through_completion = true;
    record.pending = true;
    // Waited for on the completion call's lane, usually the posting call's own.
    auto& pending = pending_[*call.completion_call_id >> kLaneShift];
    pending.push_back({*call.completion_call_id, slot});
    std::push_heap(pending.begin(), pending.end(), std::greater<>());
  }
  return slot;
}

void PointToPointMatcher::release_if_unheld(std::int32_t slot) {
  const auto& record = records_[static_cast<std::size_t>(slot)];
  if (!record.queued && !record.pending)
    free_records_.push_back(slot);
}

// Out of its channel's queue without a partner (its pair cannot be trusted).
void PointToPointMatcher::unqueue(std::int32_t slot) {
  if (slot == kNoRecord)
    return;
  records_[static_cast<std::size_t>(slot)].queued = false;
  release_if_unheld(slot);
}

void PointToPointMatcher::enqueue(const Channel& channel, bool send, const Endpoint& endpoint) {
  const auto& [sender, receiver, tag, comm] = channel;
  if (flagged(sender, receiver, comm)) {
    unqueue(endpoint.record);
    return;
  }
  auto& queues = channels_[channel];
  (send ? queues.sends : queues.receives).push_back(endpoint);
  while (!queues.sends.empty() && !queues.receives.empty()) {
    const auto sent = queues.sends.front();
    const auto received = queues.receives.front();
    queues.sends.pop_front();
    queues.receives.pop_front();
    pair(sent.record, received.post_ns, received.rank);
    pair(received.record, sent.post_ns, sent.rank);
  }
}

void PointToPointMatcher::pair(std::int32_t slot, std::int64_t partner_post_ns, int partner) {
  if (slot == kNoRecord)
    return;
  auto& record = records_[static_cast<std::size_t>(slot)];
  record.queued = false;
  record.paired = true;
  record.partner_post_ns = partner_post_ns;
  record.partner = partner;
  if (record.blocked_known)
    measure(slot);
  else
    release_if_unheld(slot); // its completion call never came, or it still waits for it
}

// Once paired and with its blocking interval known, the record is measured and let go.
void PointToPointMatcher::measure(std::int32_t slot) {
  const auto& record = records_[static_cast<std::size_t>(slot)];
  const auto duration = record.block_end_ns - record.block_start_ns;
  const Wait wait{record.kind,
                  record.comm_id,
                  record.rank,
                  record.phase,
                  record.partner,
                  record.block_function,
                  std::clamp<std::int64_t>(record.partner_post_ns - record.block_start_ns, 0, duration),
                  record.block_start_ns};
  if (!record.through_completion) {
    waits_.add(wait);
  } else if (wait.wait_ns > 0) {
    const auto [held, first] = completion_waits_.try_emplace(record.block_call, wait);
    if (first)
      completion_ends_.emplace_back(record.block_end_ns, record.block_call);
    else if (wait.wait_ns > held->second.wait_ns)
      held->second = wait;
  }
  release_if_unheld(slot);
}

// The records whose completion call this is get their blocking interval; those whose completion
// call the scan has passed on this lane (one it did not read: a call the rules do not follow) are
// let go, measuring nothing.
void PointToPointMatcher::complete(const ScannedCall& call) {
  const auto found = pending_.find(call.id >> kLaneShift);
  if (found == pending_.end())
    return;
  auto& pending = found->second;
  while (!pending.empty() && pending.front().completion_call <= call.id) {
    const auto [completion_call, slot] = pending.front();
    std::pop_heap(pending.begin(), pending.end(), std::greater<>());
    pending.pop_back();
    auto& record = records_[static_cast<std::size_t>(slot)];
    record.pending = false;
    if (completion_call < call.id) {
      release_if_unheld(slot);
      continue;
    }
    blocks_in(record, call);
    if (record.paired)
      measure(slot);
  }
}

void PointToPointMatcher::flush_completions(std::int64_t before_ns) {
  while (!completion_ends_.empty() && completion_ends_.front().first < before_ns) {
    const auto held = completion_waits_.find(completion_ends_.front().second);
    waits_.add(held->second);
    completion_waits_.erase(held);
    completion_ends_.pop_front();
  }
}

void PointToPointMatcher::finish() {
  flush_completions(std::numeric_limits<std::int64_t>::max());
}

void PointToPointMatcher::drop_channel(std::map<Channel, Queues>::iterator channel) {
  for (const auto* side : {&channel->second.sends, &channel->second.receives})
    for (const auto& endpoint : *side)
      unqueue(endpoint.record);
  channels_.erase(channel);
}

// A flagged pair's messages are not paired any more (their waits are dropped at the end), and
// what is queued for it is let go, so that its unpaired messages do not pile up.
void PointToPointMatcher::flag_pair(int sender, int receiver, std::int64_t comm_id) {
  if (!flagged_pairs_.insert({sender, receiver, comm_id}).second)
    return;
  constexpr auto kLowest = std::numeric_limits<std::int64_t>::min();
  for (auto channel = channels_.lower_bound({sender, receiver, kLowest, kLowest});
       channel != channels_.end() && std::get<0>(channel->first) == sender &&
       std::get<1>(channel->first) == receiver;) {
    const auto next = std::next(channel);
    if (std::get<3>(channel->first) == comm_id)
      drop_channel(channel);
    channel = next;
  }
}

void PointToPointMatcher::flag_receiver(int receiver, std::int64_t comm_id) {
  if (!flagged_receivers_.insert({receiver, comm_id}).second)
    return;
  for (auto channel = channels_.begin(); channel != channels_.end();) {
    const auto next = std::next(channel);
    if (std::get<1>(channel->first) == receiver && std::get<3>(channel->first) == comm_id)
      drop_channel(channel);
    channel = next;
  }
}

bool PointToPointMatcher::flagged(int sender, int receiver, std::int64_t comm_id) const {
  return flagged_pairs_.contains({sender, receiver, comm_id}) ||
         flagged_receivers_.contains({receiver, comm_id});
}

bool PointToPointMatcher::reliable(WaitKind kind, std::int64_t comm_id, int rank, int partner) const {
  if (kind == WaitKind::LateSender)
    return !flagged(partner, rank, comm_id);
  if (kind == WaitKind::LateReceiver)
    return !flagged(rank, partner, comm_id);
  return true;
}

} // namespace commlens::analysis::detail
