#include "measured_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace commlens::runtime::tuning {

namespace {

std::string size_text(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

int rank_in_listing(Algorithm algorithm) {
  return static_cast<int>(std::find(std::begin(kAlgorithms), std::end(kAlgorithms), algorithm) -
                          std::begin(kAlgorithms));
}

} // namespace

std::vector<Timing> timings_from_calls(std::span<const CallDuration> calls, Algorithm algorithm,
                                       std::uint32_t host_percent) {
  std::map<std::uint64_t, std::map<std::int64_t, std::vector<std::int64_t>>> durations;
  for (const CallDuration& call : calls) {
    durations[call.bytes][call.rank].push_back(call.duration_ns);
  }
  std::vector<Timing> timings;
  for (auto& [bytes, by_rank] : durations) {
    double slowest = 0;
    for (auto& [rank, values] : by_rank) {
      const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
      std::nth_element(values.begin(), middle, values.end());
      slowest = std::max(slowest, static_cast<double>(*middle));
    }
    timings.push_back({bytes, algorithm, host_percent, slowest});
  }
  return timings;
}

std::vector<Rule> rules_from_timings(std::span<const Timing> timings, const MeasuredShape& shape) {
  // The winner of each size, sizes in ascending order.
  std::map<std::uint64_t, const Timing*> winners;
  for (const Timing& timing : timings) {
    const Timing*& best = winners[timing.bytes];
    if (best == nullptr || timing.median_ns < best->median_ns ||
        (timing.median_ns == best->median_ns &&
         rank_in_listing(timing.algorithm) < rank_in_listing(best->algorithm))) {
      best = &timing;
    }
  }
  std::vector<Rule> rules;
  std::uint64_t first_bytes = 0;
  for (auto it = winners.begin(); it != winners.end(); ++it) {
    const Timing& winner = *it->second;
    const auto next = std::next(it);
    if (it == winners.begin() || rules.back().algorithm != winner.algorithm ||
        rules.back().host_percent != winner.host_percent) {
      first_bytes = it->first;
      rules.push_back({shape.gpus, shape.ranks_share_gpu, shape.in_place, std::nullopt, winner.algorithm,
                       winner.host_percent, ""});
    }
    const bool run_ends = next == winners.end() || next->second->algorithm != winner.algorithm ||
                          next->second->host_percent != winner.host_percent;
    if (run_ends) {
      rules.back().max_bytes = next == winners.end() ? std::nullopt : std::optional(it->first);
      rules.back().why =
          fmt::format("fastest measured from {} to {}", size_text(first_bytes), size_text(it->first));
    }
  }
  return rules;
}

} // namespace commlens::runtime::tuning
