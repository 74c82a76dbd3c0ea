// Late sender, late receiver and wait at collective, one finding per communicator (by its name,
// so the halves of a split are one subject, as the program's code sees them).
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"
#include "wait_states.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace commlens::analysis::detail {
namespace {

constexpr std::size_t kEvidencePairs = 3;

struct Group {
  std::int64_t wait_ns = 0;
  std::uint64_t calls = 0;
  std::vector<WaitBucket> buckets;
};

std::string_view rule_of(WaitKind kind) {
  switch (kind) {
  case WaitKind::LateSender:
    return "late-sender";
  case WaitKind::LateReceiver:
    return "late-receiver";
  case WaitKind::Collective:
    return "wait-at-collective";
  }
  return "";
}

// A rank's calls or requests as their id range (rowids: no index needed).
std::string rank_range(std::string_view column, int rank) {
  return fmt::format("{0} >= {1} << 46 AND {0} < ({1} + 1) << 46", column, rank);
}

// The calls (or, for waits in a completion call, the requests) the largest wait is made of.
std::string query_for(const FindingContext& context, const WaitBucket& top) {
  const auto function = context.function_name(top.function_id);
  if (top.kind == WaitKind::Collective)
    return fmt::format("SELECT rank, start_ns, end_ns - start_ns AS duration_ns FROM mpi_calls WHERE "
                       "function_id = (SELECT id FROM functions WHERE name = '{}') AND comm_id = {} ORDER BY "
                       "duration_ns DESC LIMIT 20",
                       function, top.comm_id);
  if (function.starts_with("MPI_Wait") || function.starts_with("MPI_Test")) {
    const auto posting = top.kind == WaitKind::LateSender ? "MPI_Irecv" : "MPI_Issend";
    return fmt::format(
        "SELECT request_id, post_ns, complete_ns - post_ns AS queue_ns FROM mpi_requests WHERE "
        "{} AND peer = {} AND function_id = (SELECT id FROM functions WHERE name = '{}') "
        "ORDER BY queue_ns DESC LIMIT 20",
        rank_range("request_id", top.rank), top.partner, posting);
  }
  return fmt::format("SELECT id, start_ns, end_ns - start_ns AS duration_ns FROM mpi_calls WHERE {} AND "
                     "function_id = (SELECT id FROM functions WHERE name = '{}') AND peer = {} ORDER BY "
                     "duration_ns DESC LIMIT 20",
                     rank_range("id", top.rank), function, top.partner);
}

std::string pair_line(const FindingContext& context, const WaitBucket& bucket) {
  const auto function = context.function_name(bucket.function_id);
  switch (bucket.kind) {
  case WaitKind::LateSender:
    return fmt::format("rank {} waited {} in {} for rank {}'s sends ({})", bucket.rank,
                       human_duration(double(bucket.wait_ns)), function, bucket.partner,
                       count_of(bucket.calls, "call"));
  case WaitKind::LateReceiver:
    return fmt::format("rank {} waited {} in {} for rank {} to post its receives ({})", bucket.rank,
                       human_duration(double(bucket.wait_ns)), function, bucket.partner,
                       count_of(bucket.calls, "call"));
  case WaitKind::Collective:
    return fmt::format("rank {} waited {} in {} for rank {} ({})", bucket.rank,
                       human_duration(double(bucket.wait_ns)), function, bucket.partner,
                       count_of(bucket.calls, "call"));
  }
  return "";
}

// "rank 3 entered last in 48 of 50 collectives"
std::string last_rank_line(const WaitStates& states, const Group& group) {
  std::map<int, std::uint64_t> last;
  std::uint64_t instances = 0;
  std::set<std::int64_t> communicators;
  for (const auto& bucket : group.buckets)
    communicators.insert(bucket.comm_id);
  for (const auto comm_id : communicators) {
    if (const auto found = states.collective_instances.find(comm_id);
        found != states.collective_instances.end())
      instances += found->second;
    for (const auto& [key, count] : states.waited_for)
      if (key.first == comm_id)
        last[key.second] += count;
  }
  const auto most = std::max_element(last.begin(), last.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == last.end())
    return {};
  return fmt::format("rank {} was the one waited for (last to enter, or the root) in {} of {} collectives",
                     most->first, most->second, instances);
}

Finding finding_of(const FindingContext& context, const WaitStates& states, WaitKind kind,
                   const std::string& label, Group group, double measured) {
  auto finding = make_finding(context, rule_of(kind), label, group.wait_ns, measured);
  std::sort(group.buckets.begin(), group.buckets.end(),
            [](const WaitBucket& a, const WaitBucket& b) { return a.wait_ns > b.wait_ns; });
  const auto& top = group.buckets.front();
  const auto total = human_duration(double(group.wait_ns));
  switch (kind) {
  case WaitKind::LateSender:
    finding.title = fmt::format("Receives wait for late senders on {}: {} in {}", label, total,
                                count_of(group.calls, "call"));
    finding.view = fmt::format("Timeline: rank {}'s {} calls, zoomed in until the lines from rank {}'s sends "
                               "show",
                               top.rank, context.function_name(top.function_id), top.partner);
    finding.advice =
        "The senders start late: balance the work done before the sends, send as soon as the "
        "data is ready (MPI_Isend), and post receives early (MPI_Irecv) with work before the wait.";
    break;
  case WaitKind::LateReceiver:
    finding.title = fmt::format("Sends wait for late receivers on {}: {} in {}", label, total,
                                count_of(group.calls, "call"));
    finding.view = fmt::format("Timeline: rank {}'s {} calls and rank {}'s receives", top.rank,
                               context.function_name(top.function_id), top.partner);
    finding.advice =
        "Blocking sends wait until their receive is posted (always for MPI_Ssend, above the eager "
        "limit for MPI_Send): post the receives first (MPI_Irecv), or send with MPI_Isend and "
        "wait later.";
    break;
  case WaitKind::Collective:
    finding.title =
        fmt::format("Ranks wait at collectives on {}: {} in {}", label, total, count_of(group.calls, "call"));
    finding.view = fmt::format("Timeline: the {} calls on {}", context.function_name(top.function_id), label);
    finding.advice =
        "The ranks reach the collective at different times: balance the work before it, or start "
        "it as a nonblocking collective (MPI_Iallreduce) and work until its MPI_Wait.";
    if (const auto line = last_rank_line(states, group); !line.empty())
      finding.evidence.push_back(line);
    break;
  }
  for (std::size_t index = 0; index < group.buckets.size() && index < kEvidencePairs; ++index)
    finding.evidence.push_back(pair_line(context, group.buckets[index]));
  if (group.buckets.size() > kEvidencePairs)
    finding.evidence.push_back(fmt::format("and {} more rank pair{}", group.buckets.size() - kEvidencePairs,
                                           group.buckets.size() - kEvidencePairs == 1 ? "" : "s"));
  finding.query = query_for(context, top);
  finding.timeline = TimelinePlace{top.longest_start_ns,
                                   top.longest_start_ns + top.longest_ns,
                                   {top.rank, top.partner},
                                   context.function_name(top.function_id)};
  return finding;
}

} // namespace

void find_wait_state_problems(const FindingContext& context, FindingsSection& section) {
  if (!context.wait_states) {
    section.not_analysed.push_back("late sender, late receiver and wait at collective: not recorded in "
                                   "summary mode (commlens run --mode "
                                   "trace)");
    return;
  }
  const auto& states = *context.wait_states;
  std::map<std::pair<WaitKind, std::string>, Group> groups;
  for (const auto& bucket : states.buckets) {
    auto& group = groups[{bucket.kind, context.communicators.label(bucket.comm_id)}];
    group.wait_ns += bucket.wait_ns;
    group.calls += bucket.calls;
    group.buckets.push_back(bucket);
  }
  for (auto& [key, group] : groups) {
    const double measured = context.share_of_ranks_time(double(group.wait_ns));
    if (reaches_threshold(rule_of(key.first), measured))
      section.findings.push_back(
          finding_of(context, states, key.first, key.second, std::move(group), measured));
  }
}

} // namespace commlens::analysis::detail
