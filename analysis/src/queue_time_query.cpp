#include "commlens/analysis/quantile_sketch.hpp"
#include "report_queries.hpp"

#include <algorithm>
#include <map>

namespace commlens::analysis::detail {
namespace {

// mpi_requests has no phase column: a request belongs to the phase its rank was in when posting it.
constexpr std::string_view kQueueTimeSql = R"sql(
SELECT q.function_id, q.complete_ns - q.post_ns FROM mpi_requests q
WHERE (?1 IS NULL OR q.rank = ?1)
  AND (?2 IS NULL OR EXISTS (SELECT 1 FROM phases p WHERE p.rank = q.rank AND p.phase = ?2
                             AND q.post_ns >= p.start_ns AND (p.end_ns IS NULL OR q.post_ns < p.end_ns)))
)sql";

} // namespace

std::vector<QueueTimeStats> query_queue_times(const Database& database, const ReportFilter& filter) {
  std::map<int, QuantileSketch> by_function;
  auto query = database.prepare(kQueueTimeSql);
  bind_filter(query, filter);
  while (query.step())
    by_function[static_cast<int>(query.integer(0))].add(query.integer(1));

  const auto names = query_function_names(database);
  std::vector<QueueTimeStats> queue_times;
  for (const auto& [function_id, sketch] : by_function) {
    const auto name = names.find(function_id);
    queue_times.push_back({name != names.end() ? name->second : "function " + std::to_string(function_id),
                           sketch.count(), sketch.quantile(0.5), sketch.quantile(0.95), sketch.max()});
  }
  std::stable_sort(queue_times.begin(), queue_times.end(),
                   [](const auto& a, const auto& b) { return a.operations > b.operations; });
  return queue_times;
}

} // namespace commlens::analysis::detail
