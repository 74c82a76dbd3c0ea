// Sections over tables that other collectors add (MPI_T, CUDA, the multi-path runtime). Each is one
// function that reads its tables through the public column names of docs/schema.md and
// says in one line when the database holds none of its data.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {
OptionalSection query_mpit_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("pvars") || !database.has_rows("pvar_samples"))
    return {.absent = "no MPI_T data in this database"};
  return query_pvar_summary(database, filter);
}

OptionalSection query_cuda_copy_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("cuda_copies"))
    return {.absent = "no CUDA data in this database"};
  OptionalSection section{.headers = {"path", "copies", "bytes", "time", "bandwidth"}};
  auto query = database.prepare(R"sql(
SELECT path, COUNT(*), SUM(bytes), SUM(end_ns - start_ns) FROM cuda_copies
WHERE ?1 IS NULL OR rank = ?1 GROUP BY path ORDER BY SUM(bytes) DESC)sql");
  query.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  while (query.step()) {
    const auto bytes = query.integer(2);
    const auto time_ns = query.integer(3);
    // bytes per ns is GB/s.
    const auto bandwidth = time_ns > 0 ? fmt::format("{:.2f} GB/s", double(bytes) / double(time_ns)) : "-";
    section.rows.push_back({query.text(0), query.text(1), binary_size(static_cast<std::uint64_t>(bytes)),
                            fmt::format("{} ns", time_ns), bandwidth});
  }
  return section;
}

// What the GPU collective runtime ran and what it handed to the baseline, and why, with what chose
// the algorithm (tuning table rule, forced), per MPI function (allreduce and, with p2p, the
// point-to-point calls): the first thing to read after an A/B run (docs/runtime.md).
OptionalSection query_runtime_decision_section(const Database& database, const ReportFilter& filter) {
  if (!database.has_rows("runtime_ops"))
    return {.absent = "no runtime decisions in this database"};
  OptionalSection section{.headers = {"function", "implementation", "decision", "reason", "calls", "bytes",
                                      "mean time", "bandwidth", "from peer GPUs", "through host",
                                      "chosen by"}};
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
    const auto bytes = query.integer(4);
    const auto time_ns = query.integer(5);
    // bytes per ns is GB/s: the call's data over its time (algorithm bandwidth).
    const auto bandwidth = time_ns > 0 ? fmt::format("{:.2f} GB/s", double(bytes) / double(time_ns)) : "-";
    section.rows.push_back({query.text(9), query.text(0), query.text(1), query.text(2), query.text(3),
                            binary_size(static_cast<std::uint64_t>(bytes)),
                            human_duration(calls > 0 ? double(time_ns) / double(calls) : 0.0), bandwidth,
                            binary_size(static_cast<std::uint64_t>(query.integer(6))),
                            binary_size(static_cast<std::uint64_t>(query.integer(7))), query.text(8)});
  }
  return section;
}

} // namespace commlens::analysis::detail
