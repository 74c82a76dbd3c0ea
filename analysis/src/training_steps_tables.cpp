// The training-steps section as report tables: a summary (with the GPU breakdown), calls per step,
// the collective sizes per step (fusion buckets, shards) with their host and GPU time, every step,
// and MPI_T and CUDA copies per step when the run has them.
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

// "12.3 ms (45%)": a part of the median step.
std::string with_share(std::int64_t ns, std::int64_t of_ns) {
  return of_ns > 0 ? fmt::format("{} ({})", human_duration(double(ns)), percent(double(ns) / double(of_ns)))
                   : human_duration(double(ns));
}

void add_gpu_rows(const TrainingSteps& steps, ReportTable& table) {
  if (steps.median_nccl_gpu_ns > 0)
    table.rows.push_back({"NCCL calls' time on the GPU per step, median",
                          with_share(steps.median_nccl_gpu_ns, steps.median_ns)});
  if (steps.gpu_steps.empty()) {
    table.rows.push_back({"GPU breakdown (compute, communication, exposed)", "none: " + steps.gpu_absent});
    return;
  }
  const std::int64_t communication = steps.median_gpu_communication_ns;
  table.rows.push_back({"GPU breakdown from the kernels of steps", steps.gpu_steps});
  table.rows.push_back(
      {"GPU compute per step, median", with_share(steps.median_gpu_compute_ns, steps.median_ns)});
  table.rows.push_back({"GPU communication per step, median", with_share(communication, steps.median_ns)});
  table.rows.push_back(
      {"of it overlapped by compute",
       communication > 0
           ? fmt::format("{} ({} of the communication)",
                         human_duration(double(steps.median_gpu_overlapped_ns)),
                         percent(double(steps.median_gpu_overlapped_ns) / double(communication)))
           : std::string("-")});
  table.rows.push_back({"exposed communication per step, median (nothing computes meanwhile)",
                        with_share(steps.median_gpu_exposed_ns, steps.median_ns)});
  table.rows.push_back({"GPU idle per step, median", with_share(steps.median_gpu_idle_ns, steps.median_ns)});
}

ReportTable summary_table(const TrainingSteps& steps) {
  ReportTable table{.title = "Training steps", .headers = {"figure", "value"}};
  const auto& first = steps.steps.front();
  const auto& last = steps.steps.back();
  std::uint64_t allreduce_calls = 0;
  std::uint64_t allreduce_bytes = 0;
  for (const auto& step : steps.steps) {
    allreduce_calls += step.allreduce_calls;
    allreduce_bytes += step.allreduce_bytes;
  }
  table.rows = {{"steps", fmt::format("{} (phases {} to {}, marked by {}), {} rank-steps", steps.steps.size(),
                                      first.phase, last.phase, steps.marked_by, steps.rank_steps)},
                {"step time, median", human_duration(double(steps.median_ns))},
                {"step time, quartiles", fmt::format("{} to {}", human_duration(double(steps.p25_ns)),
                                                     human_duration(double(steps.p75_ns)))},
                {"step time, min to max", fmt::format("{} to {}", human_duration(double(steps.min_ns)),
                                                      human_duration(double(steps.max_ns)))}};
  if (steps.warmup_steps > 0)
    table.rows.push_back(
        {"first step (warm-up: left out of the shares)", human_duration(double(first.duration_ns))});
  table.rows.push_back(
      {"time in MPI and NCCL calls per step, median (host)",
       fmt::format("{} of the median step", with_share(steps.median_mpi_ns, steps.median_ns))});
  table.rows.push_back({"time in MPI and NCCL calls, share of the steps' time", percent(steps.mpi_share)});
  if (allreduce_calls > 0) {
    table.rows.push_back(
        {"allreduce calls per step and rank", per_step_count(double(allreduce_calls) / steps.rank_steps)});
    table.rows.push_back(
        {"allreduce bytes per step and rank", bytes_per_step(double(allreduce_bytes) / steps.rank_steps)});
  }
  if (steps.nonblocking_allreduce) {
    table.rows.push_back(
        {"nonblocking allreduces pending per step and rank", human_duration(steps.in_flight_ns)});
    table.rows.push_back(
        {"of it outside MPI calls (the rank computing)",
         fmt::format("{} ({})", human_duration(steps.in_flight_outside_mpi_ns),
                     steps.in_flight_ns > 0 ? percent(steps.in_flight_outside_mpi_ns / steps.in_flight_ns)
                                            : "-")});
  }
  add_gpu_rows(steps, table);
  if (steps.profiler_ns_per_step > 0) {
    const double own_ns = steps.profiler_ns_per_step;
    table.rows.push_back(
        {"commlens's own time per step on the copying threads",
         fmt::format("{} ({} of the median step): {} copies, {} a CUDA runtime call", human_duration(own_ns),
                     fmt::format("{:.2f}%", 100 * own_ns / double(steps.median_ns)),
                     per_step_count(steps.copies_per_step),
                     human_duration(double(steps.profiler_ns_per_call)))});
  }
  return table;
}

ReportTable functions_table(const TrainingSteps& steps) {
  ReportTable table{.title = "Training steps: MPI and NCCL calls per step and rank",
                    .headers = {"function", "calls", "sent", "received", "time"}};
  for (const auto& function : steps.functions)
    table.rows.push_back({function.name, calls_range(function), bytes_per_step(function.bytes_sent_per_step),
                          bytes_per_step(function.bytes_recv_per_step),
                          human_duration(function.time_per_step_ns)});
  if (table.rows.empty())
    table.absent = "no MPI or NCCL calls inside the steps";
  return table;
}

ReportTable collective_sizes_table(const TrainingSteps& steps) {
  ReportTable table{
      .title = "Training steps: collective sizes per step and rank (one call per fusion bucket or shard)",
      .headers = {"function", "key", "size", "calls", "bytes", "host time", "GPU time"}};
  if (steps.exact_sizes)
    table.headers.push_back("exact sizes");
  for (const auto& bin : steps.collective_sizes) {
    table.rows.push_back({bin.function, bin.key, bin.label, per_step_count(bin.calls_per_step),
                          bytes_per_step(bin.bytes_per_step), human_duration(bin.time_per_step_ns),
                          bin.gpu_time_per_step_ns > 0 ? human_duration(bin.gpu_time_per_step_ns) : "-"});
    if (steps.exact_sizes)
      table.rows.back().push_back(bin.exact_sizes);
  }
  if (table.rows.empty())
    table.absent = "no allreduce, all-gather, reduce-scatter, broadcast or reduce inside the steps";
  return table;
}

// "-" where the step has no such figure.
std::string gpu_figure(bool known, std::int64_t ns) {
  return known ? human_duration(double(ns)) : "-";
}

ReportTable each_step_table(const TrainingSteps& steps) {
  ReportTable table{
      .title = steps.steps.size() > kStepRowsShown
                   ? fmt::format("Training steps: each step (the first {}; all in JSON)", kStepRowsShown)
                   : std::string("Training steps: each step"),
      .headers = {"phase", "ranks", "step time", "MPI and NCCL calls (mean of ranks)", "share", "calls",
                  "allreduce calls", "allreduce bytes", "NCCL on GPU", "GPU compute", "GPU communication",
                  "exposed communication"}};
  for (const auto& step : steps.steps) {
    if (table.rows.size() == kStepRowsShown)
      break;
    const double ranks = std::max(step.ranks, 1);
    const bool gpu = step.gpu_ranks > 0;
    table.rows.push_back(
        {std::to_string(step.phase), std::to_string(step.ranks), human_duration(double(step.duration_ns)),
         human_duration(double(step.mpi_ns)),
         step.duration_ns > 0 ? percent(double(step.mpi_ns) / double(step.duration_ns)) : "-",
         per_step_count(double(step.calls) / ranks), per_step_count(double(step.allreduce_calls) / ranks),
         bytes_per_step(double(step.allreduce_bytes) / ranks),
         gpu_figure(step.nccl_gpu_ns > 0, step.nccl_gpu_ns), gpu_figure(gpu, step.gpu_compute_ns),
         gpu_figure(gpu, step.gpu_communication_ns), gpu_figure(gpu, step.gpu_exposed_ns)});
  }
  return table;
}

} // namespace

std::vector<ReportTable> training_steps_tables(const TrainingSteps& steps) {
  if (!steps.absent.empty())
    return {ReportTable{.title = "Training steps", .absent = steps.absent}};
  std::vector<ReportTable> tables{summary_table(steps), functions_table(steps), collective_sizes_table(steps),
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
