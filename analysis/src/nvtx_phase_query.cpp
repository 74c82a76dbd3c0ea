// The "NVTX phases" section: one row per user NVTX range path, with the traced calls placed in it
// (nvtx_range_sweep.hpp says how a call finds its range).
#include "nvtx_range_sweep.hpp"
#include "report_queries.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace commlens::analysis::detail {
namespace {

constexpr std::size_t kTopFunctionsPerPhase = 3;

struct PathAccumulator {
  NvtxPhaseStats stats;
  std::set<int> ranks;
  std::map<int, std::int64_t> time_by_function;
};

std::vector<std::string> top_functions(const std::map<int, std::int64_t>& time_by_function,
                                       const std::map<int, std::string>& names) {
  std::vector<std::pair<std::int64_t, std::string>> ranked;
  for (const auto& [function_id, time_ns] : time_by_function) {
    const auto name = names.find(function_id);
    ranked.emplace_back(-time_ns,
                        name != names.end() ? name->second : "function " + std::to_string(function_id));
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> top;
  for (std::size_t index = 0; index < ranked.size() && index < kTopFunctionsPerPhase; ++index)
    top.push_back(ranked[index].second);
  return top;
}

} // namespace

NvtxPhaseSection query_nvtx_phases(const Database& database, const ReportFilter& filter) {
  NvtxPhaseSection section;
  const auto ranges = load_nvtx_ranges(database, filter.rank);
  if (ranges.empty()) {
    section.absent =
        database.has_rows("nvtx_ranges")
            ? Absence{"no user NVTX ranges (only commlens' own MPI domain)", ""}
            : Absence{"no NVTX ranges", "run on a GPU with the CUDA collectors, in a program that "
                                        "marks NVTX ranges"};
    return section;
  }
  const auto selected = [&](const std::string& path) {
    return !filter.nvtx_range || nvtx_path_matches(path, *filter.nvtx_range);
  };
  std::map<std::string, PathAccumulator> by_path;
  for (const auto& range : ranges) {
    if (!selected(range.path))
      continue;
    auto& path = by_path[range.path];
    path.ranks.insert(range.rank);
    ++path.stats.ranges;
    path.stats.range_time_ns += range.end_ns - range.start_ns;
  }
  // Summary mode keeps no call times, so calls cannot be placed in ranges there.
  section.calls_placed = database.has_rows("mpi_calls");
  if (section.calls_placed)
    for_each_call_in_ranges(
        database, ranges, filter.phase, [&](const TracedCall& call, const std::string& path) {
          if (!selected(path))
            return;
          auto& stats = by_path[path];
          ++stats.stats.calls;
          stats.stats.bytes += static_cast<std::uint64_t>(call.bytes_sent + call.bytes_recv);
          stats.stats.time_total_ns += call.end_ns - call.start_ns;
          stats.time_by_function[call.function_id] += call.end_ns - call.start_ns;
        });
  const auto names = query_function_names(database);
  for (auto& [path, accumulated] : by_path) {
    accumulated.stats.path = path;
    accumulated.stats.ranks = static_cast<int>(accumulated.ranks.size());
    accumulated.stats.top_functions = top_functions(accumulated.time_by_function, names);
    section.phases.push_back(std::move(accumulated.stats));
  }
  return section;
}

} // namespace commlens::analysis::detail
