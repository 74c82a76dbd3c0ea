// The timeline's kernel rows and the runtime's record of one call, for the viewer's tooltips.
#include "commlens/analysis/breakdowns.hpp"
#include "overlapping_rows.hpp"

namespace commlens::analysis {

std::vector<TimelineKernel> query_timeline_kernels(const Database& database, int rank, std::int64_t start_ns,
                                                   std::int64_t end_ns) {
  // Kernels on several streams overlap, so the window needs the full overlap test (as copies do).
  return detail::overlapping_rows<TimelineKernel>(
      database, "cuda_kernels", "start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id", rank,
      start_ns, end_ns, [](const Statement& query) -> TimelineKernel {
        return {query.integer(0), query.integer(1), static_cast<int>(query.integer(2)),
                query.integer(3), query.text(4),    query.optional_integer(5),
                query.integer(6)};
      });
}

std::optional<RuntimeDecision> query_runtime_decision(const Database& database, std::int64_t mpi_call_id) {
  if (!database.has_table("runtime_ops"))
    return std::nullopt;
  // Files written before decision_source existed have no such column.
  const bool has_source = database.has_column("runtime_ops", "decision_source");
  auto query = database.prepare(std::string("SELECT algorithm, decision, reason, ") +
                                (has_source ? "decision_source" : "NULL") +
                                ", bytes_peer, bytes_host, ipc_opens FROM runtime_ops WHERE mpi_call_id = ?1 "
                                "ORDER BY rowid LIMIT 1");
  query.bind(1, mpi_call_id);
  if (!query.step())
    return std::nullopt;
  return RuntimeDecision{query.text(0),    query.text(1),    query.optional_text(2), query.optional_text(3),
                         query.integer(4), query.integer(5), query.integer(6)};
}

} // namespace commlens::analysis
