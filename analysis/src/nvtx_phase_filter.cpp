#include "nvtx_phase_filter.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/profiler/summary_table.hpp"
#include "nvtx_range_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <tuple>

namespace commlens::analysis::detail {
namespace {

// The call_stats key (its primary key) and the summary kept per key, rebuilt from traced calls.
using CallStatsKey =
    std::tuple<int, int, std::int64_t, int, int, int>; // rank, function, comm, bin, peer, phase
struct Summary {
  std::int64_t count = 0, bytes_sent = 0, bytes_recv = 0, time_total_ns = 0, time_min_ns = 0, time_max_ns = 0;
};

void add_call(Summary& summary, const TracedCall& call) {
  const auto time_ns = call.end_ns - call.start_ns;
  summary.time_min_ns = summary.count == 0 ? time_ns : std::min(summary.time_min_ns, time_ns);
  summary.time_max_ns = std::max(summary.time_max_ns, time_ns);
  ++summary.count;
  summary.bytes_sent += call.bytes_sent;
  summary.bytes_recv += call.bytes_recv;
  summary.time_total_ns += time_ns;
}

// Union of [start, end) intervals given in start order.
std::int64_t covered_time(const std::vector<const NvtxRange*>& ranges) {
  std::int64_t covered = 0, covered_until = INT64_MIN;
  for (const auto* range : ranges) {
    const auto start = std::max(range->start_ns, covered_until);
    if (range->end_ns > start)
      covered += range->end_ns - start;
    covered_until = std::max(covered_until, range->end_ns);
  }
  return covered;
}

} // namespace

NvtxPhaseFilter::NvtxPhaseFilter(const Database& database, const ReportFilter& filter) : database_(database) {
  if (!filter.nvtx_range)
    return;
  const auto& selected = *filter.nvtx_range;
  const auto ranges = load_nvtx_ranges(database, filter.rank);
  std::map<int, std::vector<const NvtxRange*>> matching_by_rank;
  for (const auto& range : ranges)
    if (nvtx_path_matches(range.path, selected))
      matching_by_rank[range.rank].push_back(&range);
  if (matching_by_rank.empty())
    throw FilterError(
        fmt::format("{}: no NVTX range '{}' in this database", database.path().string(), selected));
  if (!database.has_rows("mpi_calls"))
    throw FilterError(fmt::format("{}: NVTX phase '{}' needs a trace: this database was recorded in summary "
                                  "mode, which keeps no call times to place calls in ranges",
                                  database.path().string(), selected));
  for (const auto& [rank, matching] : matching_by_rank)
    range_time_by_rank_[rank] = covered_time(matching);

  active_ = true;
  try {
    select_calls(ranges, selected);
  } catch (...) {
    drop_temp_objects();
    throw;
  }
}

void NvtxPhaseFilter::select_calls(const std::vector<NvtxRange>& ranges, const std::string& selected) {
  execute("CREATE TEMP TABLE nvtx_selected_calls (id INTEGER PRIMARY KEY)");
  execute("CREATE TEMP TABLE call_stats AS SELECT * FROM main.call_stats WHERE 0");
  std::map<CallStatsKey, Summary> summaries;
  execute("BEGIN");
  auto insert_call = database_.prepare("INSERT INTO temp.nvtx_selected_calls VALUES (?1)");
  for_each_call_in_ranges(
      database_, ranges, std::nullopt, [&](const TracedCall& call, const std::string& path) {
        if (!nvtx_path_matches(path, selected))
          return;
        insert_call.bind(1, call.id);
        insert_call.step();
        insert_call.reset();
        const int size_bin =
            size_bin_of(static_cast<std::uint64_t>(std::max(call.bytes_sent, call.bytes_recv)));
        add_call(summaries[{call.rank, call.function_id, call.comm_id, size_bin, call.peer, call.phase}],
                 call);
      });
  auto insert_summary = database_.prepare(
      "INSERT INTO temp.call_stats (rank, function_id, comm_id, size_bin, peer, phase, count, bytes_sent, "
      "bytes_recv, time_total_ns, time_min_ns, time_max_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11, ?12)");
  for (const auto& [key, summary] : summaries) {
    const auto& [rank, function_id, comm_id, size_bin, peer, phase] = key;
    const std::array<std::int64_t, 12> values = {rank,
                                                 function_id,
                                                 comm_id,
                                                 size_bin,
                                                 peer,
                                                 phase,
                                                 summary.count,
                                                 summary.bytes_sent,
                                                 summary.bytes_recv,
                                                 summary.time_total_ns,
                                                 summary.time_min_ns,
                                                 summary.time_max_ns};
    for (int index = 0; index < 12; ++index)
      insert_summary.bind(index + 1, values[static_cast<std::size_t>(index)]);
    insert_summary.step();
    insert_summary.reset();
  }
  // The rank-time query looks call_stats up by rank once per rank.
  execute("CREATE INDEX temp.nvtx_call_stats_by_rank ON call_stats (rank)");
  execute("COMMIT");
  // The unary + keeps SQLite from driving these views from the id list: mpi_requests' key is
  // (rank, request_id), and probing it per selected id skip-scans every rank (quadratic; measured
  // 62 s instead of 0.3 s over 1 M calls). Scanning the stored table and probing the list is linear,
  // and for mpi_calls it keeps the (rank, start_ns) index usable.
  execute("CREATE TEMP VIEW mpi_calls AS SELECT * FROM main.mpi_calls WHERE +id IN temp.nvtx_selected_calls");
  // A request belongs where the call that posted it does (request_id is that call's id).
  execute("CREATE TEMP VIEW mpi_requests AS SELECT * FROM main.mpi_requests "
          "WHERE +request_id IN temp.nvtx_selected_calls");
}

NvtxPhaseFilter::~NvtxPhaseFilter() {
  if (active_)
    drop_temp_objects();
}

void NvtxPhaseFilter::drop_temp_objects() const noexcept {
  // Dropping temp objects of this connection cannot meet another writer; a failure here would
  // only leave them until the connection closes, so it is not worth an exception in a destructor.
  for (const auto* sql :
       {"ROLLBACK", "DROP VIEW IF EXISTS temp.mpi_requests", "DROP VIEW IF EXISTS temp.mpi_calls",
        "DROP TABLE IF EXISTS temp.call_stats", "DROP TABLE IF EXISTS temp.nvtx_selected_calls"}) {
    try {
      execute(sql);
    } catch (const std::exception&) {
      // ROLLBACK fails when no transaction is open, the normal case.
    }
  }
}

void NvtxPhaseFilter::apply_range_time(std::vector<RankTime>& ranks) const {
  if (!active_)
    return;
  for (auto& rank : ranks) {
    const auto covered = range_time_by_rank_.find(rank.rank);
    rank.application_ns =
        covered != range_time_by_rank_.end() ? std::optional(covered->second) : std::nullopt;
    rank.mpi_share.reset();
    if (rank.application_ns && *rank.application_ns > 0)
      rank.mpi_share = static_cast<double>(rank.mpi_ns) / static_cast<double>(*rank.application_ns);
  }
}

void NvtxPhaseFilter::execute(std::string_view sql) const {
  auto statement = database_.prepare(sql);
  statement.step();
}

} // namespace commlens::analysis::detail
