#include "report_queries.hpp"

namespace commlens::analysis::detail {
namespace {

// Threads of ranks that called MPI from more than one thread; single-threaded ranks would repeat
// their rank row. The share is of the rank's application time, as in the rank table.
constexpr std::string_view kThreadTimesSql = R"sql(
SELECT t.rank, t.thread, SUM(t.calls), SUM(t.time_in_mpi_ns),
       CASE WHEN ?2 IS NULL THEN r.finalize_ns
            ELSE (SELECT COALESCE(p.end_ns, r.finalize_ns) - p.start_ns FROM phases p
                  WHERE p.rank = t.rank AND p.phase = ?2) END
FROM thread_stats t JOIN ranks r ON r.rank = t.rank
WHERE (?1 IS NULL OR t.rank = ?1) AND (?2 IS NULL OR t.phase = ?2)
  AND t.rank IN (SELECT rank FROM thread_stats GROUP BY rank HAVING COUNT(DISTINCT thread) > 1)
GROUP BY t.rank, t.thread
ORDER BY t.rank, t.thread
)sql";

} // namespace

ThreadTimeSection query_thread_times(const Database& database, const ReportFilter& filter) {
  ThreadTimeSection section;
  if (!database.has_table("thread_stats")) {
    section.absent = {"not recorded by the commlens that wrote this file",
                      "profile again with this commlens"};
    return section;
  }
  if (filter.nvtx_range) {
    section.absent = {"not split by NVTX range", ""};
    return section;
  }
  auto query = database.prepare(kThreadTimesSql);
  bind_filter(query, filter);
  while (query.step()) {
    ThreadTime thread;
    thread.rank = static_cast<int>(query.integer(0));
    thread.thread = static_cast<int>(query.integer(1));
    thread.calls = static_cast<std::uint64_t>(query.integer(2));
    thread.mpi_ns = query.integer(3);
    if (const auto application_ns = query.optional_integer(4); application_ns && *application_ns > 0)
      thread.mpi_share = static_cast<double>(thread.mpi_ns) / static_cast<double>(*application_ns);
    section.threads.push_back(thread);
  }
  if (section.threads.empty())
    section.absent = {"every rank made its MPI calls from one thread", ""};
  return section;
}

} // namespace commlens::analysis::detail
