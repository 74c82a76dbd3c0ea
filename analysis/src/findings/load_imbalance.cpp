// Load imbalance per phase: the ranks' time in a phase outside MPI (their own work) against the
// slowest rank's. The others wait for that rank somewhere in MPI, so the time they lose is the sum
// over ranks of (slowest - own), each bounded by the rank's own time in MPI in the phase: a rank
// that left the phase early (a nested NVTX range, a phase the ranks do not close together) waited
// elsewhere, if at all. Training steps (MPI_Pcontrol(2) or NVTX step phases) are one subject
// together, their warm-up left out as the steps' figures leave it out; the other phases one each.
// Needs every rank, so a report of one rank or NVTX range skips it.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace commlens::analysis::detail {
namespace {

// A rank's span of a phase, less the profiler's own start-up (its `init` row), which lies in phase 0
// outside MPI_Init's row and is no work of the program's: on a loaded machine it varies by tens of
// milliseconds from rank to rank.
constexpr std::string_view kPhaseSpanSql =
    "p.end_ns - p.start_ns - CASE WHEN p.phase = 0 THEN (SELECT COALESCE(SUM(o.time_ns), 0) FROM "
    "profiler_overhead o WHERE o.rank = p.rank AND o.component = 'init') ELSE 0 END";

// Each rank's span of each closed phase and its time in MPI there (call_stats: both modes).
std::string phase_work_sql() {
  return fmt::format(
      "SELECT p.phase, p.rank, {}, (SELECT COALESCE(SUM(c.time_total_ns), 0) FROM call_stats c "
      "WHERE c.rank = p.rank AND c.phase = p.phase), p.start_ns, p.end_ns FROM phases p WHERE p.end_ns IS "
      "NOT NULL AND "
      "(?2 IS NULL OR p.phase = ?2) ORDER BY p.phase, p.rank",
      kPhaseSpanSql);
}

// Below this loss per rank, differences in work are start-up and scheduling noise (a short run's
// ranks leave MPI_Init milliseconds apart on a loaded machine), not the program's imbalance.
constexpr std::int64_t kLeastLossPerRankNs = 10'000'000;

struct RankWork {
  int rank = 0;
  std::int64_t span_ns = 0;
  std::int64_t outside_mpi_ns = 0;
  std::int64_t mpi_ns = 0;
  std::int64_t start_ns = 0; // the rank's phase, on the trace's clock
  std::int64_t end_ns = 0;
};

struct PhaseImbalance {
  int phase = 0;
  int ranks = 0;
  std::int64_t cost_ns = 0; // what the others lose waiting for the slowest
  std::int64_t span_ns = 0; // the ranks' time in the phase
  RankWork slowest;
  double mean_outside_ns = 0;
  RankWork fastest;
  std::int64_t start_ns = 0; // from the first rank's start of the phase to the last rank's end
  std::int64_t end_ns = 0;
};

PhaseImbalance imbalance_of(int phase, const std::vector<RankWork>& ranks) {
  PhaseImbalance result;
  result.phase = phase;
  result.ranks = static_cast<int>(ranks.size());
  result.slowest = result.fastest = ranks.front();
  result.start_ns = ranks.front().start_ns;
  result.end_ns = ranks.front().end_ns;
  double total = 0;
  for (const auto& rank : ranks) {
    result.span_ns += rank.span_ns;
    result.start_ns = std::min(result.start_ns, rank.start_ns);
    result.end_ns = std::max(result.end_ns, rank.end_ns);
    total += double(rank.outside_mpi_ns);
    if (rank.outside_mpi_ns > result.slowest.outside_mpi_ns)
      result.slowest = rank;
    if (rank.outside_mpi_ns < result.fastest.outside_mpi_ns)
      result.fastest = rank;
  }
  result.mean_outside_ns = total / double(ranks.size());
  for (const auto& rank : ranks)
    result.cost_ns += std::min(result.slowest.outside_mpi_ns - rank.outside_mpi_ns, rank.mpi_ns);
  return result;
}

// The phase on the timeline, the slowest rank first.
TimelinePlace place_of(const PhaseImbalance& phase) {
  std::vector<int> ranks{phase.slowest.rank};
  if (phase.fastest.rank != phase.slowest.rank)
    ranks.push_back(phase.fastest.rank);
  return {phase.start_ns, phase.end_ns, std::move(ranks), ""};
}

std::string work_line(const PhaseImbalance& phase) {
  return fmt::format("rank {} worked {} outside MPI, the mean of the ranks {}, the least rank {} with {}",
                     phase.slowest.rank, human_duration(double(phase.slowest.outside_mpi_ns)),
                     human_duration(phase.mean_outside_ns), phase.fastest.rank,
                     human_duration(double(phase.fastest.outside_mpi_ns)));
}

std::string query_for(std::string_view phases) {
  return fmt::format(
      "SELECT p.phase, p.rank, {0} AS span_ns, SUM(c.time_total_ns) AS mpi_ns, {0} - "
      "SUM(c.time_total_ns) AS outside_mpi_ns FROM phases p JOIN call_stats c ON c.rank = p.rank "
      "AND c.phase = p.phase WHERE p.phase {1} GROUP BY p.phase, p.rank ORDER BY p.phase, "
      "outside_mpi_ns DESC",
      kPhaseSpanSql, phases);
}

constexpr std::string_view kAdvice =
    "Balance the work: give the slowest rank less (domain sizes, data or batch per rank), or give the others "
    "work to do while they wait (nonblocking calls, work stealing).";

bool worth_reporting(std::int64_t cost_ns, int ranks, double measured) {
  return cost_ns >= kLeastLossPerRankNs * ranks && reaches_threshold("load-imbalance", measured);
}

void add_phase(const FindingContext& context, const PhaseImbalance& phase, FindingsSection& section) {
  const double measured = phase.span_ns > 0 ? double(phase.cost_ns) / double(phase.span_ns) : 0.0;
  if (!worth_reporting(phase.cost_ns, phase.ranks, measured))
    return;
  auto finding =
      make_finding(context, "load-imbalance", fmt::format("phase-{}", phase.phase), phase.cost_ns, measured);
  finding.title = fmt::format("Load imbalance in phase {}: rank {} works {} longer outside MPI than the mean",
                              phase.phase, phase.slowest.rank,
                              human_duration(double(phase.slowest.outside_mpi_ns) - phase.mean_outside_ns));
  finding.evidence = {work_line(phase),
                      fmt::format("the other ranks lose {} waiting for it, {} of their time in the phase",
                                  human_duration(double(phase.cost_ns)),
                                  format_value(measured, Unit::Share))};
  finding.query = query_for(fmt::format("= {}", phase.phase));
  finding.view =
      fmt::format("Summary: time in MPI per rank (commlens report --phase {}); Timeline: the phase "
                  "band",
                  phase.phase);
  finding.timeline = place_of(phase);
  finding.advice = kAdvice;
  section.findings.push_back(std::move(finding));
}

void add_steps(const FindingContext& context, const std::vector<PhaseImbalance>& steps,
               FindingsSection& section) {
  std::int64_t cost = 0, span = 0;
  std::map<int, int> slowest_in;
  const PhaseImbalance* worst = &steps.front();
  for (const auto& step : steps) {
    cost += step.cost_ns;
    span += step.span_ns;
    ++slowest_in[step.slowest.rank];
    if (step.cost_ns > worst->cost_ns)
      worst = &step;
  }
  const double measured = span > 0 ? double(cost) / double(span) : 0.0;
  if (!worth_reporting(cost, steps.front().ranks, measured))
    return;
  const auto most = std::max_element(slowest_in.begin(), slowest_in.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  auto finding = make_finding(context, "load-imbalance", "steps", cost, measured);
  finding.title = fmt::format("Load imbalance in the training steps: the ranks lose {} of the steps' time "
                              "waiting for the slowest",
                              format_value(measured, Unit::Share));
  finding.evidence = {fmt::format("rank {} was the slowest outside MPI in {} of {} steps", most->first,
                                  most->second, steps.size()),
                      fmt::format("the worst step, phase {}: {}", worst->phase, work_line(*worst))};
  finding.query = query_for(fmt::format("BETWEEN {} AND {}", steps.front().phase, steps.back().phase));
  finding.view = "Steps: time per step and rank";
  finding.timeline = place_of(*worst);
  finding.advice = kAdvice;
  section.findings.push_back(std::move(finding));
}

} // namespace

void find_load_imbalance(const FindingContext& context, FindingsSection& section) {
  const auto& filter = context.report.filter;
  if (filter.rank || filter.nvtx_range)
    return; // the slowest rank is one of all of them
  std::set<int> step_phases, warmup_phases;
  const auto& training = context.report.training_steps;
  for (std::size_t index = 0; index < training.steps.size(); ++index)
    (index < static_cast<std::size_t>(training.warmup_steps) ? warmup_phases : step_phases)
        .insert(training.steps[index].phase);
  std::map<int, std::vector<RankWork>> phases;
  auto query = context.database.prepare(phase_work_sql());
  query.bind(1, std::optional<std::int64_t>{})
      .bind(2, filter.phase ? std::optional<std::int64_t>(*filter.phase) : std::nullopt);
  while (query.step()) {
    const auto span = query.integer(2);
    const auto mpi = std::min(span, query.integer(3));
    phases[static_cast<int>(query.integer(0))].push_back({static_cast<int>(query.integer(1)), span,
                                                          std::max<std::int64_t>(0, span - mpi), mpi,
                                                          query.integer(4), query.integer(5)});
  }
  std::vector<PhaseImbalance> steps;
  for (const auto& [phase, ranks] : phases) {
    if (ranks.size() < 2 || warmup_phases.contains(phase))
      continue;
    const auto imbalance = imbalance_of(phase, ranks);
    if (step_phases.contains(phase))
      steps.push_back(imbalance);
    else
      add_phase(context, imbalance, section);
  }
  if (!steps.empty())
    add_steps(context, steps, section);
}

} // namespace commlens::analysis::detail
