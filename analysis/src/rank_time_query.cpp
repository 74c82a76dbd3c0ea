#include "report_queries.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace commlens::analysis::detail {
namespace {

// ranks.finalize_ns already counts from that rank's MPI_Init, so it is the application time. Under
// a phase filter the application time is the phase's span on that rank; an open phase ends at
// finalize. Correlated subqueries use call_stats' primary key (rank first) instead of a scan.
// {0}: ranks.mpi_wall_ns, or NULL in files written before it existed.
constexpr std::string_view kRankTimesSql = R"sql(
SELECT r.rank, r.host, r.dropped_events, r.summary_overflow, r.finalized,
       CASE WHEN ?2 IS NULL THEN r.finalize_ns
            ELSE (SELECT COALESCE(p.end_ns, r.finalize_ns) - p.start_ns FROM phases p
                  WHERE p.rank = r.rank AND p.phase = ?2) END,
       (SELECT COALESCE(SUM(c.time_total_ns), 0) FROM call_stats c
        WHERE c.rank = r.rank AND (?2 IS NULL OR c.phase = ?2)),
       (SELECT COALESCE(SUM(c.count), 0) FROM call_stats c
        WHERE c.rank = r.rank AND (?2 IS NULL OR c.phase = ?2)),
       r.threads, {0}
FROM ranks r
WHERE ?1 IS NULL OR r.rank = ?1
ORDER BY r.rank
)sql";

} // namespace

std::vector<RankTime> query_rank_times(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(
      fmt::format(kRankTimesSql, database.has_column("ranks", "mpi_wall_ns") ? "r.mpi_wall_ns" : "NULL"));
  bind_filter(query, filter);
  // The profiler measures the rank's wall time in MPI over the whole run only: a filter that keeps
  // part of the calls can only add up the threads' times.
  const bool whole_run = !filter.phase && !filter.nvtx_range;
  std::vector<RankTime> ranks;
  while (query.step()) {
    RankTime rank;
    rank.rank = static_cast<int>(query.integer(0));
    rank.host = query.text(1);
    rank.dropped_events = static_cast<std::uint64_t>(query.integer(2));
    rank.summary_overflow = static_cast<std::uint64_t>(query.integer(3));
    rank.finalized = query.integer(4) != 0;
    rank.application_ns = query.optional_integer(5);
    rank.mpi_thread_sum_ns = query.integer(6);
    rank.calls = static_cast<std::uint64_t>(query.integer(7));
    rank.threads = static_cast<int>(query.integer(8));
    const auto wall_ns = query.optional_integer(9);
    if (whole_run && wall_ns) {
      // Both come from ticks, converted apart: rounding may put the wall time a few ns above the
      // sum it can never exceed.
      rank.mpi_ns = std::min(*wall_ns, rank.mpi_thread_sum_ns);
    } else {
      rank.mpi_ns = rank.mpi_thread_sum_ns;
      rank.mpi_ns_summed_over_threads = rank.threads > 1;
    }
    if (rank.application_ns && *rank.application_ns > 0)
      rank.mpi_share = static_cast<double>(rank.mpi_ns) / static_cast<double>(*rank.application_ns);
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

} // namespace commlens::analysis::detail
