#include "measured_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <type_traits>

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

double microseconds(double ns) {
  return static_cast<double>(static_cast<std::int64_t>(ns / 10.0 + 0.5)) / 100.0; // 0.01 us
}

// The rule fields every kind shares, from a run.
template <typename RuleType>
void fill_measured(RuleType& rule, const WinnerRun& run, const std::string& measurement) {
  rule.why = run.why;
  rule.measured = RuleMeasurement{measurement, run.points};
}

// A data-movement or tree measurement replaces only the rules of its MPS setting: one table holds both.
// Resident rules have one shape: ranks sharing one GPU under MPS.
template <typename RuleType> bool same_shape(const RuleType& rule, const MeasuredShape& shape) {
  if constexpr (std::is_same_v<RuleType, ResidentRule>) {
    return shape.gpus == GpuCount::One && shape.ranks_share_gpu && shape.mps;
  } else {
    bool same = rule.gpus == shape.gpus && rule.ranks_share_gpu == shape.ranks_share_gpu;
    if constexpr (requires { rule.mps; }) {
      same = same && rule.mps == shape.mps;
    }
    return same;
  }
}

// Two rules of one shape (gpus, sharing and, where the kind has it, MPS).
template <typename RuleType> bool same_group(const RuleType& a, const RuleType& b) {
  if constexpr (std::is_same_v<RuleType, ResidentRule>) {
    return true;
  } else {
    bool same = a.gpus == b.gpus && a.ranks_share_gpu == b.ranks_share_gpu;
    if constexpr (requires { a.mps; }) {
      same = same && a.mps == b.mps;
    }
    return same;
  }
}

// The rank count of the measurement a rule names, where the table lists it.
template <typename RuleType>
std::optional<int> measured_ranks(const RuleType& rule, const std::vector<Measurement>& measurements) {
  if (!rule.measured) {
    return std::nullopt;
  }
  const auto listed = std::ranges::find(measurements, rule.measured->measurement, &Measurement::id);
  return listed != measurements.end() && listed->ranks > 0 ? std::optional(listed->ranks) : std::nullopt;
}

// `earlier`'s rules of other shapes or rank counts, after `kept`'s; all of them when this kind of
// rule was not measured (no new rules), so measuring one operation (`commlens tune --ops`) keeps
// the others'.
template <typename RuleType>
void keep_other_shapes(std::vector<RuleType>& kept, const std::vector<RuleType>& earlier,
                       const std::vector<Measurement>& earlier_measurements, const MeasuredShape& shape) {
  const bool measured = !kept.empty();
  std::ranges::copy_if(earlier, std::back_inserter(kept), [&](const RuleType& rule) {
    const std::optional<int> ranks = measured_ranks(rule, earlier_measurements);
    return !measured || !same_shape(rule, shape) || (shape.ranks > 0 && ranks && *ranks != shape.ranks);
  });
}

// Each measured rule's rank range from the rank counts its shape was measured at: the sizes nearer
// to its count than to the neighbouring counts (a tie goes to the smaller count).
template <typename RuleType>
void assign_rank_ranges(std::vector<RuleType>& rules, const std::vector<Measurement>& measurements) {
  for (RuleType& rule : rules) {
    const std::optional<int> own = measured_ranks(rule, measurements);
    if (!own) {
      continue;
    }
    std::vector<int> counts;
    for (const RuleType& other : rules) {
      const std::optional<int> theirs = measured_ranks(other, measurements);
      if (theirs && same_group(rule, other)) {
        counts.push_back(*theirs);
      }
    }
    std::ranges::sort(counts);
    const auto below = std::ranges::lower_bound(counts, *own);
    const auto above = std::ranges::upper_bound(counts, *own);
    rule.ranks.min_ranks =
        below == counts.begin() ? std::nullopt : std::optional((*std::prev(below) + *own) / 2 + 1);
    rule.ranks.max_ranks = above == counts.end() ? std::nullopt : std::optional((*own + *above) / 2);
  }
}

template <typename RuleType>
void collect_names(const std::vector<RuleType>& rules, std::vector<std::string>& names) {
  for (const RuleType& rule : rules) {
    if (rule.measured) {
      names.push_back(rule.measured->measurement);
    }
  }
}

trees::Shape shape_from(const std::string& name, const std::string& candidate) {
  const auto shape = trees::parse_shape(name);
  if (!shape) {
    throw TableError(fmt::format("tree candidate \"{}\": unknown shape \"{}\"", candidate, name));
  }
  return *shape;
}

} // namespace

std::vector<CandidateTiming> candidate_timings(std::span<const CandidateCall> calls) {
  std::map<std::pair<std::uint64_t, std::string>, std::map<std::int64_t, std::vector<std::int64_t>>>
      durations;
  for (const CandidateCall& call : calls) {
    durations[{call.bytes, call.candidate}][call.rank].push_back(call.duration_ns);
  }
  std::vector<CandidateTiming> timings;
  for (auto& [key, by_rank] : durations) {
    double slowest = 0;
    for (auto& [rank, values] : by_rank) {
      const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
      std::nth_element(values.begin(), middle, values.end());
      slowest = std::max(slowest, static_cast<double>(*middle));
    }
    timings.push_back({key.first, key.second, slowest});
  }
  return timings;
}

std::vector<WinnerRun> winner_runs(std::span<const CandidateTiming> timings) {
  // Per size, ascending, the candidates fastest first (ties by name, so every run decides alike).
  std::map<std::uint64_t, std::vector<const CandidateTiming*>> by_size;
  for (const CandidateTiming& timing : timings) {
    by_size[timing.bytes].push_back(&timing);
  }
  std::vector<WinnerRun> runs;
  std::uint64_t first_bytes = 0;
  for (auto& [bytes, ranked] : by_size) {
    std::ranges::sort(ranked, [](const CandidateTiming* a, const CandidateTiming* b) {
      return a->median_ns != b->median_ns ? a->median_ns < b->median_ns : a->candidate < b->candidate;
    });
    MeasuredPoint point{bytes, ranked[0]->candidate, microseconds(ranked[0]->median_ns), "", 0};
    if (ranked.size() > 1) {
      point.runner_up = ranked[1]->candidate;
      point.runner_up_us = microseconds(ranked[1]->median_ns);
    }
    if (runs.empty() || runs.back().winner != point.winner) {
      first_bytes = bytes;
      runs.push_back({point.winner, std::nullopt, {}, ""});
    }
    runs.back().points.push_back(point);
    runs.back().max_bytes = bytes;
    runs.back().why = fmt::format("fastest measured from {} to {}", size_text(first_bytes), size_text(bytes));
  }
  if (!runs.empty()) {
    runs.back().max_bytes.reset(); // the largest run covers everything above too
  }
  return runs;
}

std::vector<Rule> allreduce_rules(std::span<const WinnerRun> runs, const MeasuredShape& shape, bool in_place,
                                  std::uint32_t host_percent, const std::string& measurement) {
  std::vector<Rule> rules;
  for (const WinnerRun& run : runs) {
    const auto algorithm = parse_algorithm(run.winner);
    if (!algorithm) {
      throw TableError(fmt::format("allreduce candidate \"{}\" is not an algorithm", run.winner));
    }
    // The last run stops at the largest size measured, unlike the other operations' rules: above
    // it the default rules decide, whose striping over the host path (at 256 MiB and more between
    // two GPUs, with a host share the user sets) the sweep does not measure.
    const std::uint64_t max_bytes = run.max_bytes.value_or(run.points.back().bytes);
    Rule rule{shape.gpus, shape.ranks_share_gpu,
              in_place,   max_bytes,
              *algorithm, *algorithm == AllreduceAlgorithm::OneShotStriped ? host_percent : 0,
              {},         {}};
    fill_measured(rule, run, measurement);
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::vector<MovementRule> movement_rules(std::span<const WinnerRun> runs, Collective collective,
                                         const MeasuredShape& shape, const std::string& measurement) {
  std::vector<MovementRule> rules;
  for (const WinnerRun& run : runs) {
    const auto algorithm = parse_movement_algorithm(run.winner);
    if (!algorithm) {
      throw TableError(fmt::format("data movement candidate \"{}\" is not an algorithm", run.winner));
    }
    MovementRule rule{{collective}, shape.gpus, shape.ranks_share_gpu, shape.mps, run.max_bytes, *algorithm,
                      {},           {}};
    fill_measured(rule, run, measurement);
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::vector<TreeRule> tree_rules(std::span<const WinnerRun> runs, RootedCollective collective,
                                 const MeasuredShape& shape, const std::string& measurement) {
  static const std::regex kTreeName(
      R"(tree:gpu=(\w+),node=(\w+),nodes=(\w+):segment=(\d+):window=(\d+)(?::streams=(\d+))?(:push)?)");
  std::vector<TreeRule> rules;
  for (const WinnerRun& run : runs) {
    std::smatch parts;
    if (!std::regex_match(run.winner, parts, kTreeName)) {
      throw TableError(
          fmt::format("tree candidate \"{}\" is not tree:SHAPES:segment=N:window=W[:streams=S]", run.winner));
    }
    TreeRule rule;
    rule.collective = collective;
    rule.gpus = shape.gpus;
    rule.ranks_share_gpu = shape.ranks_share_gpu;
    rule.max_bytes = run.max_bytes;
    rule.shapes = {shape_from(parts[1], run.winner), shape_from(parts[2], run.winner),
                   shape_from(parts[3], run.winner)};
    rule.segment_bytes = std::clamp<std::uint64_t>(std::stoull(parts[4]), kMinSegmentBytes, kMaxSegmentBytes);
    rule.window = std::clamp<std::uint32_t>(static_cast<std::uint32_t>(std::stoul(parts[5])), 1, kMaxWindow);
    // One stream is named by leaving it out, as runtime_ops does.
    rule.streams =
        parts[6].matched
            ? std::clamp<std::uint32_t>(static_cast<std::uint32_t>(std::stoul(parts[6])), 1, kMaxStreams)
            : 1;
    rule.push = parts[7].matched;
    rule.mps = shape.mps;
    fill_measured(rule, run, measurement);
    rules.push_back(std::move(rule));
  }
  return rules;
}

ResidentRule resident_rule(std::span<const WinnerRun> runs, std::string_view collective,
                           const std::string& measurement) {
  ResidentRule rule;
  rule.collective = collective;
  RuleMeasurement measured{measurement, {}};
  std::size_t sizes_won = 0;
  std::size_t sizes_to_limit = 0;
  for (const WinnerRun& run : runs) {
    if (run.winner != "resident" && run.winner != "table") {
      throw TableError(fmt::format("resident candidate \"{}\" is neither resident nor table", run.winner));
    }
    measured.points.insert(measured.points.end(), run.points.begin(), run.points.end());
    if (run.winner == "resident") {
      rule.max_bytes = run.points.back().bytes;
      sizes_won += run.points.size();
      sizes_to_limit = measured.points.size();
    }
  }
  rule.why = sizes_won == 0
                 ? "the table's algorithms fastest at every size measured"
                 : fmt::format("resident kernel fastest up to {} (at {} of the {} sizes measured up to it)",
                               size_text(rule.max_bytes), sizes_won, sizes_to_limit);
  rule.measured = std::move(measured);
  return rule;
}

Table merge_measured(Table measured, const Table& earlier, const MeasuredShape& shape) {
  keep_other_shapes(measured.rules, earlier.rules, earlier.measurements, shape);
  keep_other_shapes(measured.data_movement, earlier.data_movement, earlier.measurements, shape);
  keep_other_shapes(measured.trees, earlier.trees, earlier.measurements, shape);
  keep_other_shapes(measured.resident, earlier.resident, earlier.measurements, shape);
  if (!measured.point_to_point.measured) {
    measured.point_to_point = earlier.point_to_point;
  }
  std::vector<std::string> named;
  collect_names(measured.rules, named);
  collect_names(measured.data_movement, named);
  collect_names(measured.trees, named);
  collect_names(measured.resident, named);
  if (measured.point_to_point.measured) {
    named.push_back(measured.point_to_point.measured->measurement);
  }
  for (const Measurement& listed : earlier.measurements) {
    const bool have = std::ranges::any_of(measured.measurements,
                                          [&](const Measurement& each) { return each.id == listed.id; });
    if (!have && std::ranges::find(named, listed.id) != named.end()) {
      measured.measurements.push_back(listed);
    }
  }
  assign_rank_ranges(measured.rules, measured.measurements);
  assign_rank_ranges(measured.data_movement, measured.measurements);
  assign_rank_ranges(measured.trees, measured.measurements);
  assign_rank_ranges(measured.resident, measured.measurements);
  return measured;
}

} // namespace commlens::runtime::tuning
