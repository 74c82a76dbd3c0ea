// The MPI_T section: per pvar, communicator and rank, the mean and largest value over time of the
// pvar summed over its elements (for per-peer queue lengths: the whole queue), and when the largest
// was read, with the MPI call that was running then: the call whose boundary it was read at, else
// (trace mode) the call on that rank whose interval holds the sample's time.
#include "names/communicator_names.hpp"
#include "report_queries.hpp"

namespace commlens::analysis::detail {

OptionalSection query_pvar_summary(const Database& database, const ReportFilter& filter) {
  auto section = section_with({{"pvar", "pvar", Unit::Text},
                               {"communicator", "communicator", Unit::Text},
                               {"rank", "rank", Unit::Count},
                               {"samples", "samples", Unit::Count},
                               {"mean", "mean", Unit::Count},
                               {"max", "max", Unit::Count},
                               {"max at", "max_at_ns", Unit::Nanoseconds},
                               {"call running", "call_running", Unit::Text}});
  auto query = database.prepare(R"sql(
WITH totals AS (
  SELECT pvar_id, comm_id, rank, time_ns, SUM(value) AS total, MAX(call_id) AS call_id FROM pvar_samples
  WHERE ?1 IS NULL OR rank = ?1 GROUP BY pvar_id, comm_id, rank, time_ns),
ranked AS (
  SELECT *, ROW_NUMBER() OVER (w ORDER BY total DESC, time_ns) AS place, COUNT(*) OVER w AS samples,
         AVG(total) OVER w AS mean
  FROM totals WINDOW w AS (PARTITION BY pvar_id, comm_id, rank))
SELECT p.name, r.comm_id, r.rank, r.samples, r.mean, r.total, r.time_ns,
  COALESCE((SELECT f.name FROM mpi_calls c JOIN functions f ON f.id = c.function_id WHERE c.id = r.call_id),
           (SELECT f.name FROM mpi_calls c JOIN functions f ON f.id = c.function_id
            WHERE c.rank = r.rank AND c.start_ns <= r.time_ns AND c.end_ns >= r.time_ns
            ORDER BY c.start_ns DESC LIMIT 1), '-')
FROM ranked r JOIN pvars p ON p.id = r.pvar_id WHERE r.place = 1
ORDER BY r.total DESC, p.name, r.comm_id, r.rank)sql");
  query.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  const CommunicatorNames communicators(database);
  while (query.step()) {
    const auto comm_id = query.optional_integer(1);
    section.rows.push_back({query.text(0), comm_id ? Cell(communicators.label(comm_id)) : Cell("-"),
                            query.integer(2), query.integer(3), query.real(4), query.real(5),
                            query.integer(6), query.text(7)});
  }
  return section;
}

} // namespace commlens::analysis::detail
