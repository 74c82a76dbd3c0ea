#include "report_queries.hpp"

#include <map>

namespace commlens::analysis::detail {
namespace {

constexpr std::string_view kPhaseSpansSql = R"sql(
SELECT phase, COUNT(*), MIN(start_ns), MAX(end_ns), SUM(end_ns IS NULL) FROM phases
WHERE (?1 IS NULL OR rank = ?1) AND (?2 IS NULL OR phase = ?2) GROUP BY phase ORDER BY phase
)sql";

constexpr std::string_view kPhaseFunctionsSql = R"sql(
SELECT c.phase, f.name, SUM(c.count), SUM(c.bytes_sent + c.bytes_recv), SUM(c.time_total_ns)
FROM call_stats c JOIN functions f ON f.id = c.function_id
WHERE (?1 IS NULL OR c.rank = ?1) AND (?2 IS NULL OR c.phase = ?2)
GROUP BY c.phase, c.function_id ORDER BY c.phase, SUM(c.time_total_ns) DESC, f.name
)sql";

constexpr std::size_t kTopFunctionsPerPhase = 3;

} // namespace

std::vector<PhaseStats> query_phases(const Database& database, const ReportFilter& filter) {
  std::map<int, PhaseStats> phases;
  auto spans = database.prepare(kPhaseSpansSql);
  bind_filter(spans, filter);
  while (spans.step()) {
    auto& phase = phases[static_cast<int>(spans.integer(0))];
    phase.phase = static_cast<int>(spans.integer(0));
    phase.ranks = static_cast<int>(spans.integer(1));
    phase.start_ns = spans.integer(2);
    if (spans.integer(4) == 0) // a phase some rank left open has no end yet
      phase.end_ns = spans.optional_integer(3);
  }
  // call_stats may name a phase the phases table lacks (a rank file cut short); it is still shown.
  auto functions = database.prepare(kPhaseFunctionsSql);
  bind_filter(functions, filter);
  while (functions.step()) {
    auto& phase = phases[static_cast<int>(functions.integer(0))];
    phase.phase = static_cast<int>(functions.integer(0));
    phase.calls += static_cast<std::uint64_t>(functions.integer(2));
    phase.bytes += static_cast<std::uint64_t>(functions.integer(3));
    phase.time_total_ns += functions.integer(4);
    if (phase.top_functions.size() < kTopFunctionsPerPhase)
      phase.top_functions.push_back(functions.text(1));
  }
  std::vector<PhaseStats> ordered;
  for (auto& [number, phase] : phases)
    ordered.push_back(std::move(phase));
  return ordered;
}

} // namespace commlens::analysis::detail
