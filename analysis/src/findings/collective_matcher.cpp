#include "collective_matcher.hpp"

#include <algorithm>

namespace commlens::analysis::detail {

void CollectiveMatcher::add(const ScannedCall& call, CollectiveShape shape) {
  auto& communicator = communicators_[call.comm_id];
  if (!communicator.members) {
    const auto found = members_.find(call.comm_id);
    static const CommunicatorMembers kUnknown;
    communicator.members = found == members_.end() ? &kUnknown : &found->second;
  }
  const auto& members = *communicator.members;
  if (members.size < 2)
    return;
  const auto number = communicator.calls_made[call.rank]++;
  if (number < communicator.first_open)
    return; // an instance already measured cannot take another call (a trace cut short)
  while (communicator.open.size() <= number - communicator.first_open)
    communicator.open.emplace_back();
  auto& instance = communicator.open[number - communicator.first_open];
  instance.function_id = call.function_id;
  instance.shape = shape;
  const auto local = members.local_ranks.find(call.rank);
  instance.entries.push_back({call.rank, local == members.local_ranks.end() ? -1 : local->second, call.phase,
                              call.start_ns, call.end_ns, call.root});
  if (static_cast<int>(instance.entries.size()) < members.size)
    return;
  measure(call.comm_id, instance);
  instance.measured = true;
  instance.entries = {};
  while (!communicator.open.empty() && communicator.open.front().measured) {
    communicator.open.pop_front();
    ++communicator.first_open;
  }
}

void CollectiveMatcher::wait(std::int64_t comm_id, const Instance& instance, const Entry& entry,
                             std::int64_t until_ns, int partner) {
  const auto wait_ns = std::clamp<std::int64_t>(until_ns - entry.start_ns, 0, entry.end_ns - entry.start_ns);
  waits_.add({WaitKind::Collective, comm_id, entry.rank, entry.phase, partner, instance.function_id, wait_ns,
              entry.start_ns});
}

void CollectiveMatcher::measure(std::int64_t comm_id, const Instance& instance) {
  ++instances_[comm_id];
  const auto& entries = instance.entries;
  const auto later = [](const Entry& a, const Entry& b) { return a.start_ns < b.start_ns; };
  switch (instance.shape) {
  case CollectiveShape::AllToAll: {
    const auto& last = *std::max_element(entries.begin(), entries.end(), later);
    ++last_[{comm_id, last.rank}];
    for (const auto& entry : entries)
      wait(comm_id, instance, entry, last.start_ns, last.rank);
    return;
  }
  case CollectiveShape::OneToAll: {
    const auto root = std::find_if(entries.begin(), entries.end(),
                                   [](const Entry& entry) { return entry.local_rank == entry.root; });
    if (root == entries.end())
      return;
    ++last_[{comm_id, root->rank}];
    for (const auto& entry : entries)
      if (&entry != &*root)
        wait(comm_id, instance, entry, root->start_ns, root->rank);
    return;
  }
  case CollectiveShape::AllToOne: {
    const auto root = std::find_if(entries.begin(), entries.end(),
                                   [](const Entry& entry) { return entry.local_rank == entry.root; });
    if (root == entries.end())
      return;
    const Entry* last = nullptr;
    for (const auto& entry : entries)
      if (&entry != &*root && (!last || entry.start_ns > last->start_ns))
        last = &entry;
    if (!last)
      return;
    ++last_[{comm_id, last->rank}];
    wait(comm_id, instance, *root, last->start_ns, last->rank);
    return;
  }
  }
}

} // namespace commlens::analysis::detail
