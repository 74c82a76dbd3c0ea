#include "commlens/analysis/report.hpp"

#include "commlens/analysis/errors.hpp"
#include "findings/findings_engine.hpp"
#include "nvtx_phase_filter.hpp"
#include "report_queries.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

namespace commlens::analysis {
namespace detail {

// "0: ranks 0-1 (launched); 1: ranks 2-3 (spawned)" for a run whose program spawned jobs; empty
// for a run of one job, whose ranks are its MPI_COMM_WORLD ranks.
std::string describe_jobs(const Database& database) {
  if (!database.has_table("jobs"))
    return {};
  auto query =
      database.prepare("SELECT job, first_rank, first_rank + size - 1, spawned FROM jobs ORDER BY job");
  std::vector<std::string> jobs;
  while (query.step())
    jobs.push_back(fmt::format("{}: ranks {}-{} ({})", query.integer(0), query.integer(1), query.integer(2),
                               query.integer(3) != 0 ? "spawned" : "launched"));
  return jobs.size() > 1 ? fmt::format("{}", fmt::join(jobs, "; ")) : std::string();
}

std::string run_value(const Database& database, std::string_view key) {
  auto query = database.prepare("SELECT value FROM run WHERE key = ?1");
  query.bind(1, key);
  return query.step() ? query.text(0) : std::string();
}

std::vector<std::pair<std::string, std::string>> query_run_metadata(const Database& database) {
  auto query = database.prepare("SELECT key, value FROM run ORDER BY key");
  std::vector<std::pair<std::string, std::string>> entries;
  while (query.step())
    entries.emplace_back(query.text(0), query.text(1));
  return entries;
}

} // namespace detail

namespace {

// A filter that matches nothing is almost always a typo; saying so beats an empty report.
void check_filter(const Database& database, const ReportFilter& filter) {
  if (filter.rank) {
    auto query = database.prepare("SELECT 1 FROM ranks WHERE rank = ?1");
    query.bind(1, *filter.rank);
    if (!query.step())
      throw FilterError(
          fmt::format("{}: no rank {} in this database", database.path().string(), *filter.rank));
  }
  if (filter.phase) {
    auto query = database.prepare(
        "SELECT 1 FROM phases WHERE phase = ?1 UNION ALL SELECT 1 FROM call_stats WHERE phase = ?1 LIMIT 1");
    query.bind(1, *filter.phase);
    if (!query.step())
      throw FilterError(
          fmt::format("{}: no phase {} in this database", database.path().string(), *filter.phase));
  }
}

template <typename Value>
std::optional<RankSpread> spread_of(const std::vector<RankTime>& ranks, Value value_of) {
  if (ranks.empty())
    return std::nullopt;
  RankSpread spread;
  spread.min = spread.max = value_of(ranks.front());
  spread.min_rank = spread.max_rank = ranks.front().rank;
  double sum = 0;
  for (const auto& rank : ranks) {
    const double value = value_of(rank);
    sum += value;
    if (value < spread.min) {
      spread.min = value;
      spread.min_rank = rank.rank;
    }
    if (value > spread.max) {
      spread.max = value;
      spread.max_rank = rank.rank;
    }
  }
  spread.mean = sum / static_cast<double>(ranks.size());
  spread.imbalance = spread.mean > 0 ? spread.max / spread.mean - 1.0 : 0.0;
  return spread;
}

} // namespace

Report build_report(const Database& database, const ReportFilter& filter, const ReportProgress& progress,
                    const ReportSections& sections) {
  check_filter(database, filter);
  const detail::NvtxPhaseFilter nvtx_filter(database, filter);
  Report report;
  report.database_path = database.path().string();
  report.schema_version = database.schema_version();
  report.filter = filter;
  report.missing_ranks = database.missing_ranks();
  report.jobs = detail::describe_jobs(database);

  const bool traced = database.has_rows("mpi_calls");
  const bool has_requests = database.has_rows("mpi_requests");
  report.trace_mode = traced || detail::run_value(database, "mode") == "trace";
  const Absence needs_trace_mode{"not recorded in summary mode", "commlens run --mode trace"};
  // One step per section, so a slow section shows on the progress line by name.
  const std::vector<std::pair<std::string_view, std::function<void()>>> steps = {
      {"run", [&] { report.run = detail::query_run_metadata(database); }},
      {"ranks",
       [&] {
         report.ranks = detail::query_rank_times(database, filter);
         nvtx_filter.apply_range_time(report.ranks);
       }},
      {"threads",
       [&] {
         auto section = detail::query_thread_times(database, filter);
         report.threads = std::move(section.threads);
         report.threads_absent = std::move(section.absent);
       }},
      {"functions", [&] { report.functions = detail::query_function_stats(database, filter); }},
      {"communicators", [&] { report.communicators = detail::query_communicators(database, filter); }},
      {"partners",
       [&] {
         report.partners = detail::query_partners(database, filter);
         report.collectives = detail::query_collective_traffic(database, filter);
       }},
      {"queue times",
       [&] {
         if (!sections.queue_times)
           report.queue_times_absent = {"not read", ""};
         else if (has_requests)
           report.queue_times = detail::query_queue_times(database, filter);
         else if (report.trace_mode)
           report.queue_times_absent = {"the program completed no nonblocking operation", ""};
         else
           report.queue_times_absent = needs_trace_mode;
       }},
      {"concurrency",
       [&] {
         if (!sections.concurrency) {
           report.concurrency_absent = {"not read", ""};
           return;
         }
         if (!report.trace_mode) {
           report.concurrency_absent = needs_trace_mode;
           return;
         }
         report.concurrency = detail::query_concurrency(database, filter);
         if (report.concurrency.empty())
           report.concurrency_absent = {"every rank made its MPI calls from one thread", ""};
       }},
      {"phases",
       [&] {
         report.phases = detail::query_phases(database, filter);
         for (const auto& phase : report.phases)
           report.run_start_ns = std::min(report.run_start_ns, phase.start_ns);
       }},
      {"training steps", [&] { report.training_steps = query_training_steps(database, filter); }},
      {"NVTX phases",
       [&] {
         auto section = detail::query_nvtx_phases(database, filter);
         report.nvtx_phases = std::move(section.phases);
         report.nvtx_phases_absent = std::move(section.absent);
         report.nvtx_calls_placed = section.calls_placed;
       }},
      {"MPI_T", [&] { report.mpit = detail::query_mpit_section(database, filter); }},
      {"CUDA copies", [&] { report.cuda_copies = detail::query_cuda_copy_section(database, filter); }},
      {"runtime",
       [&] { report.runtime_decisions = detail::query_runtime_decision_section(database, filter); }},
      {"NCCL", [&] { report.nccl = detail::query_nccl_section(database, filter); }},
  };
  for (std::size_t step = 0; step < steps.size(); ++step) {
    if (progress)
      progress(steps[step].first, static_cast<int>(step), static_cast<int>(steps.size()) + 1);
    steps[step].second();
  }
  report.mpi_time_spread = spread_of(report.ranks, [](const RankTime& rank) { return double(rank.mpi_ns); });
  const bool every_rank_has_share =
      std::all_of(report.ranks.begin(), report.ranks.end(),
                  [](const RankTime& rank) { return rank.mpi_share.has_value(); });
  if (every_rank_has_share)
    report.mpi_share_spread = spread_of(report.ranks, [](const RankTime& rank) { return *rank.mpi_share; });
  for (const auto& rank : report.ranks) {
    report.dropped_events += rank.dropped_events;
    report.summary_overflow += rank.summary_overflow;
  }
  // Last: the rules read the sections above.
  if (progress)
    progress("findings", static_cast<int>(steps.size()), static_cast<int>(steps.size()) + 1);
  if (sections.findings)
    report.findings = build_findings(database, report);
  if (progress)
    progress("done", static_cast<int>(steps.size()) + 1, static_cast<int>(steps.size()) + 1);
  return report;
}

FindingsSection build_findings(const Database& database, const Report& report) {
  return detail::find_findings(database, report);
}

} // namespace commlens::analysis
