#include "point_to_point_matcher.hpp"

#include <algorithm>
#include <limits>

namespace commlens::analysis::detail {
namespace {

// Every so many calls the waits of completion calls that ended well before the scan's position are
// added: every send they could still pair with started before they ended. The margin covers what
// the merge by start time leaves out of order (a rank's threads are read one after another).
constexpr std::int64_t kFlushEvery = 4096;
constexpr std::int64_t kFlushMarginNs = 1'000'000'000;

} // namespace

void PointToPointMatcher::add(const ScannedCall& call) {
  const auto role = roles_.find(call.function_id);
  if (role == roles_.end())
    return;
  if (++scanned_ % kFlushEvery == 0)
    flush_completions(call.start_ns - kFlushMarginNs);
  const int rank = call.rank;
  const auto peer = static_cast<int>(call.peer);
  const auto comm = call.comm_id;
  const bool has_peer = call.peer >= 0;
  const Channel to_peer{rank, peer, call.tag, comm};
  const Channel from_peer{peer, rank, call.tag, comm};
  switch (role->second) {
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
      enqueue(to_peer, true, {call.start_ns, rank, -1});
    return;
  case PointToPointRole::Send:
    if (has_peer)
      enqueue(to_peer, true, {call.start_ns, rank, -1});
    return;
  case PointToPointRole::BlockingSend:
  case PointToPointRole::NonblockingSsend: {
    if (!has_peer)
      return;
    const bool blocked_now = role->second == PointToPointRole::BlockingSend;
    const bool measured = blocked_now || call.completion_call_id.has_value();
    if (measured)
      record(call, WaitKind::LateReceiver, comm, blocked_now);
    enqueue(to_peer, true, {call.start_ns, rank, measured ? call.id : -1});
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
    const bool blocked_now = role->second == PointToPointRole::Receive;
    const bool measured = blocked_now || call.completion_call_id.has_value();
    if (measured)
      record(call, WaitKind::LateSender, comm, blocked_now);
    enqueue(from_peer, false, {call.start_ns, rank, measured ? call.id : -1});
    return;
  }
  }
}

void PointToPointMatcher::record(const ScannedCall& call, WaitKind kind, std::int64_t comm_id,
                                 bool blocked_now) {
  Record record;
  record.kind = kind;
  record.comm_id = comm_id;
  record.rank = call.rank;
  if (blocked_now) {
    record.blocked_known = true;
    record.block_call = call.id;
    record.block_function = call.function_id;
    record.phase = call.phase;
    record.block_start_ns = call.start_ns;
    record.block_end_ns = call.end_ns;
  } else {
    record.through_completion = true;
    awaiting_completion_[*call.completion_call_id].push_back(call.id);
  }
  records_[call.id] = record;
}

void PointToPointMatcher::enqueue(const Channel& channel, bool send, const Endpoint& endpoint) {
  const auto& [sender, receiver, tag, comm] = channel;
  if (flagged(sender, receiver, comm)) {
    records_.erase(endpoint.record);
    return;
  }
  const auto found = channels_.try_emplace(channel).first;
  auto& queues = found->second;
  (send ? queues.sends : queues.receives).push_back(endpoint);
  while (!queues.sends.empty() && !queues.receives.empty()) {
    const auto sent = queues.sends.front();
    const auto received = queues.receives.front();
    queues.sends.pop_front();
    queues.receives.pop_front();
    pair(sent.record, received.post_ns, received.rank);
    pair(received.record, sent.post_ns, sent.rank);
  }
  if (queues.sends.empty() && queues.receives.empty())
    channels_.erase(found);
}

void PointToPointMatcher::pair(std::int64_t record_id, std::int64_t partner_post_ns, int partner) {
  const auto found = records_.find(record_id);
  if (record_id < 0 || found == records_.end())
    return;
  found->second.paired = true;
  found->second.partner_post_ns = partner_post_ns;
  found->second.partner = partner;
  if (found->second.blocked_known)
    measure(record_id);
}

void PointToPointMatcher::measure(std::int64_t record_id) {
  const auto found = records_.find(record_id);
  const auto& record = found->second;
  const auto duration = record.block_end_ns - record.block_start_ns;
  const Wait wait{record.kind,
                  record.comm_id,
                  record.rank,
                  record.phase,
                  record.partner,
                  record.block_function,
                  std::clamp<std::int64_t>(record.partner_post_ns - record.block_start_ns, 0, duration)};
  if (record.through_completion) {
    auto& held = completion_waits_[record.block_call];
    held.end_ns = record.block_end_ns;
    if (wait.wait_ns > held.wait.wait_ns)
      held.wait = wait;
  } else {
    waits_.add(wait);
  }
  records_.erase(found);
}

void PointToPointMatcher::complete(const ScannedCall& call) {
  const auto found = awaiting_completion_.find(call.id);
  if (found == awaiting_completion_.end())
    return;
  for (const auto record_id : found->second) {
    const auto record = records_.find(record_id);
    if (record == records_.end())
      continue;
    record->second.blocked_known = true;
    record->second.block_call = call.id;
    record->second.block_function = call.function_id;
    record->second.phase = call.phase;
    record->second.block_start_ns = call.start_ns;
    record->second.block_end_ns = call.end_ns;
    if (record->second.paired)
      measure(record_id);
  }
  awaiting_completion_.erase(found);
}

void PointToPointMatcher::flush_completions(std::int64_t before_ns) {
  for (auto held = completion_waits_.begin(); held != completion_waits_.end();) {
    if (held->second.end_ns >= before_ns) {
      ++held;
      continue;
    }
    waits_.add(held->second.wait);
    held = completion_waits_.erase(held);
  }
}

void PointToPointMatcher::finish() {
  flush_completions(std::numeric_limits<std::int64_t>::max());
}

void PointToPointMatcher::drop_channel(std::map<Channel, Queues>::iterator channel) {
  for (const auto* side : {&channel->second.sends, &channel->second.receives})
    for (const auto& endpoint : *side)
      records_.erase(endpoint.record);
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
