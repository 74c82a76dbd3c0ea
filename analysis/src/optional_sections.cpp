// Sections over tables that other collectors add (MPI_T, CUDA, the multi-path runtime). Each is one
// function that reads its tables through the public column names of docs/schema.md and
// says in one line, with how to record it, when the database holds none of its data.
#include "gpu/copy_timing.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {
namespace {

// bytes per ns is GB/s; empty where the copies or calls took no time.
Cell bandwidth(std::int64_t bytes, std::int64_t time_ns) {
  return time_ns > 0 ? Cell(double(bytes) / double(time_ns)) : Cell();
}

} // namespace

OptionalSection query_mpit_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("pvars") || !database.has_rows("pvar_samples"))
    return absent_section("no MPI_T samples",
                          "the mpit collector, on with COMMLENS_COLLECTORS=all, and an MPI library "
                          "with performance variables; COMMLENS_PVARS selects them");
  return query_pvar_summary(database, filter);
}

OptionalSection query_cuda_copy_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("cuda_copies"))
    return absent_section("no CUDA copies", "run on a GPU with the CUDA collectors: COMMLENS_COLLECTORS=all");
  // Time and bandwidth are those of the copies timed on the GPU (copy_timing.hpp): every copy when
  // CUPTI saw them, a sample when they were taken from the runtime's calls.
  auto section = section_with({{"path", "path", Unit::Text},
                               {"copies", "copies", Unit::Count},
                               {"bytes", "bytes", Unit::Bytes},
                               {"timed on GPU", "copies_timed", Unit::Count},
                               {"GPU time of those", "time_ns", Unit::Nanoseconds},
                               {"bandwidth", "bandwidth_gb_per_s", Unit::GigabytesPerSecond}});
  auto query =
      database.prepare(fmt::format(R"sql(
SELECT path, SUM({2}), SUM(bytes), COUNT({0}), COALESCE(SUM({0}), 0), COALESCE(SUM({1}), 0) FROM cuda_copies
WHERE ?1 IS NULL OR rank = ?1 GROUP BY path ORDER BY SUM(bytes) DESC)sql",
                                   copy_gpu_ns(database), copy_timed_bytes(database), copy_count(database)));
  query.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  while (query.step())
    section.rows.push_back({query.text(0), query.integer(1), query.integer(2), query.integer(3),
                            query.integer(4), bandwidth(query.integer(5), query.integer(4))});
  return section;
}

// What the GPU collective runtime ran and what it handed to the baseline, and why, with what chose
// the algorithm (tuning table rule, forced), per MPI function (allreduce and, with p2p, the
// point-to-point calls): the first thing to read after an A/B run (docs/runtime.md).
OptionalSection query_runtime_decision_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("runtime_ops"))
    return absent_section("no GPU runtime decisions", "COMMLENS_RUNTIME=on or ab on a GPU, in trace mode");
  auto section = section_with({{"function", "function", Unit::Text},
                               {"implementation", "implementation", Unit::Text},
                               {"decision", "decision", Unit::Text},
                               {"reason", "reason", Unit::Text},
                               {"calls", "calls", Unit::Count},
                               {"bytes", "bytes", Unit::Bytes},
                               {"mean time", "mean_time_ns", Unit::Nanoseconds},
                               {"bandwidth", "bandwidth_gb_per_s", Unit::GigabytesPerSecond},
                               {"from peer GPUs", "bytes_from_peers", Unit::Bytes},
                               {"through host", "bytes_through_host", Unit::Bytes},
                               {"chosen by", "chosen_by", Unit::Text}});
  // Files written before decision_source existed have no such column.
  const char* const source =
      database.has_column("runtime_ops", "decision_source") ? "COALESCE(o.decision_source, '')" : "''";
  auto query = database.prepare(fmt::format(R"sql(
SELECT COALESCE(i.name, CAST(o.implementation AS TEXT)), o.decision, COALESCE(o.reason, ''), COUNT(*),
       SUM(o.bytes), SUM(o.end_ns - o.start_ns), SUM(o.bytes_peer), SUM(o.bytes_host), {},
       COALESCE(f.name, CAST(o.function_id AS TEXT))
FROM runtime_ops o LEFT JOIN implementations i ON i.id = o.implementation
     LEFT JOIN functions f ON f.id = o.function_id
WHERE ?1 IS NULL OR o.rank = ?1
GROUP BY 10, 1, 2, 3, 9 ORDER BY SUM(o.end_ns - o.start_ns) DESC)sql",
                                            source));
  query.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  while (query.step()) {
    const auto calls = query.integer(3);
    const auto time_ns = query.integer(5);
    // The bandwidth is the calls' data over their time (algorithm bandwidth).
    section.rows.push_back({query.text(9), query.text(0), query.text(1), query.text(2), calls,
                            query.integer(4), calls > 0 ? Cell(double(time_ns) / double(calls)) : Cell(),
                            bandwidth(query.integer(4), time_ns), query.integer(6), query.integer(7),
                            query.text(8)});
  }
  return section;
}

} // namespace commlens::analysis::detail
