// The training-steps section as report tables: a summary, calls per step, the allreduce sizes per
// step (the fusion buckets), every step, and MPI_T and CUDA copies per step when the run has them.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_tables.hpp"
#include "training_steps_detail.hpp"

#include <fmt/format.h>

#include <cmath>

namespace commlens::analysis::detail {
namespace {

constexpr std::size_t kStepRowsShown = 50;

std::string bytes_per_step(double bytes) {
  return binary_size(static_cast<std::uint64_t>(std::llround(bytes)));
}

std::string calls_range(const StepFunctionStats& function) {
  const auto mean = per_step_count(function.calls_per_step);
  if (function.min_calls == function.max_calls)
    return mean;
  return fmt::format("{} ({} to {})", mean, function.min_calls, function.max_calls);
}

ReportTable summary_table(const TrainingSteps& steps) {
  ReportTable table{.title = "Training steps (MPI_Pcontrol(2) phases)", .headers = {"figure", "value"}};
  const auto& first = steps.steps.front();
  const auto& last = steps.steps.back();
  const auto share = [&](std::int64_t ns) {
    return steps.median_ns > 0 ? percent(double(ns) / double(steps.median_ns)) : std::string("-");
  };
  std::uint64_t allreduce_calls = 0;
  std::uint64_t allreduce_bytes = 0;
  for (const auto& step : steps.steps) {
    allreduce_calls += step.allreduce_calls;
    allreduce_bytes += step.allreduce_bytes;
  }
  table.rows = {
      {"steps", fmt::format("{} (phases {} to {}), {} rank-steps", steps.steps.size(), first.phase,
                            last.phase, steps.rank_steps)},
      {"step time, median", human_duration(double(steps.median_ns))},
      {"step time, quartiles",
       fmt::format("{} to {}", human_duration(double(steps.p25_ns)), human_duration(double(steps.p75_ns)))},
      {"step time, min to max",
       fmt::format("{} to {}", human_duration(double(steps.min_ns)), human_duration(double(steps.max_ns)))},
      {"time in MPI per step, median",
       fmt::format("{} ({} of the median step)", human_duration(double(steps.median_mpi_ns)),
                   share(steps.median_mpi_ns))},
      {"time in MPI, share of all steps", percent(steps.mpi_share)},
      {"allreduce calls per step and rank", per_step_count(double(allreduce_calls) / steps.rank_steps)},
      {"allreduce bytes per step and rank", bytes_per_step(double(allreduce_bytes) / steps.rank_steps)}};
  if (steps.nonblocking_allreduce) {
    table.rows.push_back(
        {"nonblocking allreduces pending per step and rank", human_duration(steps.in_flight_ns)});
    table.rows.push_back(
        {"of it outside MPI calls (the rank computing)",
         fmt::format("{} ({})", human_duration(steps.in_flight_outside_mpi_ns),
                     steps.in_flight_ns > 0 ? percent(steps.in_flight_outside_mpi_ns / steps.in_flight_ns)
                                            : "-")});
  }
  return table;
}

ReportTable functions_table(const TrainingSteps& steps) {
  ReportTable table{.title = "Training steps: MPI calls per step and rank",
                    .headers = {"function", "calls", "sent", "received", "time"}};
  for (const auto& function : steps.functions)
    table.rows.push_back({function.name, calls_range(function), bytes_per_step(function.bytes_sent_per_step),
                          bytes_per_step(function.bytes_recv_per_step),
                          human_duration(function.time_per_step_ns)});
  if (table.rows.empty())
    table.absent = "no MPI calls inside the steps";
  return table;
}

ReportTable allreduce_sizes_table(const TrainingSteps& steps) {
  ReportTable table{.title = "Training steps: allreduce sizes per step and rank (one call per fusion bucket)",
                    .headers = {"function", "key", "size", "calls", "bytes", "time"}};
  if (steps.exact_sizes)
    table.headers.push_back("exact sizes");
  for (const auto& bin : steps.allreduce_sizes) {
    table.rows.push_back({bin.function, bin.key, bin.label, per_step_count(bin.calls_per_step),
                          bytes_per_step(bin.bytes_per_step), human_duration(bin.time_per_step_ns)});
    if (steps.exact_sizes)
      table.rows.back().push_back(bin.exact_sizes);
  }
  if (table.rows.empty())
    table.absent = "no allreduce inside the steps";
  return table;
}

ReportTable each_step_table(const TrainingSteps& steps) {
  ReportTable table{
      .title = steps.steps.size() > kStepRowsShown
                   ? fmt::format("Training steps: each step (the first {}; all in JSON)", kStepRowsShown)
                   : std::string("Training steps: each step"),
      .headers = {"phase", "ranks", "step time", "MPI (mean of ranks)", "share", "calls", "allreduce calls",
                  "allreduce bytes"}};
  for (const auto& step : steps.steps) {
    if (table.rows.size() == kStepRowsShown)
      break;
    const double ranks = std::max(step.ranks, 1);
    table.rows.push_back(
        {std::to_string(step.phase), std::to_string(step.ranks), human_duration(double(step.duration_ns)),
         human_duration(double(step.mpi_ns)),
         step.duration_ns > 0 ? percent(double(step.mpi_ns) / double(step.duration_ns)) : "-",
         per_step_count(double(step.calls) / ranks), per_step_count(double(step.allreduce_calls) / ranks),
         bytes_per_step(double(step.allreduce_bytes) / ranks)});
  }
  return table;
}

} // namespace

std::vector<ReportTable> training_steps_tables(const TrainingSteps& steps) {
  if (!steps.absent.empty())
    return {ReportTable{.title = "Training steps", .absent = steps.absent}};
  std::vector<ReportTable> tables{summary_table(steps), functions_table(steps), allreduce_sizes_table(steps),
                                  each_step_table(steps)};
  tables.push_back({.title = "Training steps: MPI_T per step",
                    .absent = steps.pvar_rows.empty() ? "no MPI_T samples inside the steps" : "",
                    .headers = steps.pvar_headers,
                    .rows = steps.pvar_rows});
  tables.push_back({.title = "Training steps: CUDA copies per step and rank",
                    .absent = steps.copy_rows.empty() ? "no CUDA copies inside the steps" : "",
                    .headers = steps.copy_headers,
                    .rows = steps.copy_rows});
  return tables;
}

} // namespace commlens::analysis::detail
