// How long a step's nonblocking allreduces were pending while the rank computed: per (rank, step),
// the union of the MPI_Iallreduce requests' post-to-completion intervals, and the part of it that
// lies outside the rank's MPI calls. Trace mode (mpi_requests, mpi_calls).
#include "report_queries.hpp"
#include "time_intervals.hpp"
#include "training_steps_detail.hpp"

#include <map>

namespace commlens::analysis::detail {
namespace {

using RankStep = std::pair<std::int64_t, std::int64_t>; // rank, phase

std::map<RankStep, Intervals> read_intervals(const Database& database, const ReportFilter& filter,
                                             std::string_view select) {
  auto query = database.prepare(std::string(kStepPhasesSql) + std::string(select));
  bind_filter(query, filter);
  std::map<RankStep, Intervals> intervals;
  while (query.step())
    intervals[{query.integer(0), query.integer(1)}].emplace_back(query.integer(2), query.integer(3));
  return intervals;
}

} // namespace

void read_step_overlap(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  const auto requests = read_intervals(database, filter, R"sql(
SELECT c.rank, c.phase, r.post_ns, r.complete_ns FROM mpi_requests r JOIN mpi_calls c ON c.id = r.request_id
  JOIN steps s ON s.rank = c.rank AND s.phase = c.phase
WHERE r.function_id = (SELECT id FROM functions WHERE name = 'MPI_Iallreduce'))sql");
  if (requests.empty())
    return;
  const auto calls = read_intervals(database, filter, R"sql(
SELECT m.rank, m.phase, m.start_ns, m.end_ns FROM mpi_calls m JOIN steps s ON s.rank = m.rank AND s.phase = m.phase)sql");
  std::int64_t in_flight = 0;
  std::int64_t inside_mpi = 0;
  for (const auto& [rank_step, pending] : requests) {
    const auto pending_merged = merged(pending);
    in_flight += length(pending_merged);
    if (const auto found = calls.find(rank_step); found != calls.end())
      inside_mpi += overlap(pending_merged, merged(found->second));
  }
  section.nonblocking_allreduce = true;
  section.in_flight_ns = double(in_flight) / double(section.rank_steps);
  section.in_flight_outside_mpi_ns = double(in_flight - inside_mpi) / double(section.rank_steps);
}

} // namespace commlens::analysis::detail
