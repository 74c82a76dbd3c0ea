#include "report_tables.hpp"

#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace commlens::analysis::detail {
namespace {

constexpr std::size_t kTopFunctions = 10;

std::string duration(std::int64_t nanoseconds) {
  return human_duration(static_cast<double>(nanoseconds));
}

ReportTable ranks_table(const Report& report) {
  ReportTable table{.title = "Time in MPI per rank",
                    .headers = {"rank", "host", "application", "MPI", "share", "calls"}};
  if (report.ranks.empty())
    table.absent = "no ranks recorded";
  for (const auto& rank : report.ranks)
    table.rows.push_back({std::to_string(rank.rank), rank.host,
                          rank.application_ns ? duration(*rank.application_ns) : "unknown",
                          duration(rank.mpi_ns), rank.mpi_share ? percent(*rank.mpi_share) : "-",
                          std::to_string(rank.calls)});
  if (const auto& spread = report.mpi_time_spread)
    table.rows.push_back(
        {"spread", fmt::format("min rank {}, max rank {}", spread->min_rank, spread->max_rank),
         fmt::format("imbalance {}", percent(spread->imbalance)),
         fmt::format("{} / {} / {}", human_duration(spread->min), human_duration(spread->mean),
                     human_duration(spread->max)),
         report.mpi_share_spread
             ? fmt::format("{} / {} / {}", percent(report.mpi_share_spread->min),
                           percent(report.mpi_share_spread->mean), percent(report.mpi_share_spread->max))
             : "-",
         "min / mean / max"});
  return table;
}

// The same functions ranked by one metric: by time, by calls, by bytes.
template <typename Metric>
ReportTable top_functions_table(const Report& report, std::string title, Metric metric) {
  ReportTable table{.title = std::move(title),
                    .headers = {"function", "calls", "sent", "received", "time", "of MPI"}};
  if (report.functions.empty())
    table.absent = "no calls recorded";
  std::vector<const FunctionStats*> ranked;
  for (const auto& function : report.functions)
    ranked.push_back(&function);
  std::stable_sort(ranked.begin(), ranked.end(), [&](auto* a, auto* b) { return metric(*a) > metric(*b); });
  ranked.resize(std::min(ranked.size(), kTopFunctions));
  for (const auto* function : ranked)
    table.rows.push_back({function->name, std::to_string(function->calls), binary_size(function->bytes_sent),
                          binary_size(function->bytes_recv), duration(function->time_total_ns),
                          percent(function->share_of_mpi_time)});
  return table;
}

ReportTable histogram_table(const FunctionStats& function) {
  ReportTable table{.title = "Message sizes of " + function.name,
                    .headers = {"key", "size", "calls", "bytes", "time"}};
  for (const auto& bin : function.size_histogram)
    table.rows.push_back({bin.key, bin.label, std::to_string(bin.calls),
                          binary_size(bin.bytes_sent + bin.bytes_recv), duration(bin.time_total_ns)});
  return table;
}

ReportTable communicators_table(const Report& report) {
  ReportTable table{.title = "Per communicator",
                    .headers = {"communicator", "size", "calls", "bytes", "time"}};
  if (report.communicators.empty())
    table.absent = "no calls recorded";
  for (const auto& communicator : report.communicators)
    table.rows.push_back({communicator.label, communicator.size > 0 ? std::to_string(communicator.size) : "-",
                          std::to_string(communicator.calls), binary_size(communicator.bytes),
                          duration(communicator.time_total_ns)});
  return table;
}

ReportTable partners_table(const Report& report) {
  ReportTable table{.title = "Point-to-point partners (sender to receiver)",
                    .headers = {"from", "to", "messages", "bytes"}};
  if (report.partners.empty())
    table.absent = "no point-to-point messages with data";
  for (const auto& partner : report.partners)
    table.rows.push_back({std::to_string(partner.from), std::to_string(partner.to),
                          std::to_string(partner.messages), binary_size(partner.bytes)});
  return table;
}

ReportTable queue_times_table(const Report& report) {
  ReportTable table{.title = "Request queue times (post to completion)",
                    .absent = report.queue_times_absent,
                    .headers = {"function", "operations", "median", "p95", "max"}};
  for (const auto& queue : report.queue_times)
    table.rows.push_back({queue.function, std::to_string(queue.operations), duration(queue.median_ns),
                          duration(queue.p95_ns), duration(queue.max_ns)});
  return table;
}

ReportTable concurrency_table(const Report& report) {
  ReportTable table{.title = "Concurrent MPI calls across threads",
                    .absent = report.concurrency_absent,
                    .headers = {"rank", "threads", "most in flight", "time with 2+ in flight"}};
  for (const auto& rank : report.concurrency)
    table.rows.push_back({std::to_string(rank.rank), std::to_string(rank.threads),
                          std::to_string(rank.max_in_flight), duration(rank.overlapped_ns)});
  return table;
}

ReportTable threads_table(const Report& report) {
  ReportTable table{.title = "Time in MPI per thread",
                    .absent = report.threads_absent,
                    .headers = {"rank", "thread", "calls", "MPI", "share"}};
  for (const auto& thread : report.threads)
    table.rows.push_back({std::to_string(thread.rank), std::to_string(thread.thread),
                          std::to_string(thread.calls), duration(thread.mpi_ns),
                          thread.mpi_share ? percent(*thread.mpi_share) : "-"});
  return table;
}

ReportTable phases_table(const Report& report) {
  ReportTable table{
      .title = "Phases (MPI_Pcontrol)",
      .headers = {"phase", "ranks", "start", "end", "calls", "bytes", "time in MPI", "top functions"}};
  if (report.phases.empty())
    table.absent = "no phases recorded";
  for (const auto& phase : report.phases)
    table.rows.push_back({std::to_string(phase.phase), std::to_string(phase.ranks), duration(phase.start_ns),
                          phase.end_ns ? duration(*phase.end_ns) : "open", std::to_string(phase.calls),
                          binary_size(phase.bytes), duration(phase.time_total_ns),
                          fmt::format("{}", fmt::join(phase.top_functions, ", "))});
  return table;
}

ReportTable nvtx_phases_table(const Report& report) {
  ReportTable table{.title = report.nvtx_calls_placed
                                 ? "Phases (user NVTX ranges)"
                                 : "Phases (user NVTX ranges; summary mode: calls not placed)",
                    .absent = report.nvtx_phases_absent,
                    .headers = {"range", "ranks", "ranges", "range time", "calls", "bytes", "time in MPI",
                                "top functions"}};
  const auto placed = [&](std::string value) { return report.nvtx_calls_placed ? value : std::string("-"); };
  for (const auto& phase : report.nvtx_phases)
    table.rows.push_back({phase.path, std::to_string(phase.ranks), std::to_string(phase.ranges),
                          duration(phase.range_time_ns), placed(std::to_string(phase.calls)),
                          placed(binary_size(phase.bytes)), placed(duration(phase.time_total_ns)),
                          fmt::format("{}", fmt::join(phase.top_functions, ", "))});
  return table;
}

ReportTable optional_table(std::string title, const OptionalSection& section) {
  return {
      .title = std::move(title), .absent = section.absent, .headers = section.headers, .rows = section.rows};
}

} // namespace

std::string filter_description(const ReportFilter& filter) {
  std::vector<std::string> parts;
  if (filter.rank)
    parts.push_back(fmt::format("rank {}", *filter.rank));
  if (filter.phase)
    parts.push_back(fmt::format("phase {}", *filter.phase));
  if (filter.nvtx_range)
    parts.push_back(fmt::format("NVTX range {}", *filter.nvtx_range));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string missing_ranks_warning(const Report& report) {
  if (report.missing_ranks.empty())
    return {};
  return fmt::format("missing ranks {} (rank files never arrived): the tables cover the other ranks only",
                     fmt::join(report.missing_ranks, ","));
}

std::string losses_warning(const Report& report) {
  if (report.dropped_events == 0 && report.summary_overflow == 0)
    return {};
  return fmt::format(
      "data lost: {} trace events dropped (threads beyond the thread limit, or calls after the "
      "last flush), {} calls not counted (summary table full); see Dropped events",
      report.dropped_events, report.summary_overflow);
}

std::string thread_sum_note(const Report& report) {
  std::vector<int> summed;
  for (const auto& rank : report.ranks)
    if (rank.mpi_ns_summed_over_threads)
      summed.push_back(rank.rank);
  if (summed.empty())
    return {};
  return fmt::format("time in MPI of rank {} is summed over its threads (wall time in MPI is recorded for "
                     "the whole run only); it can exceed the application time",
                     fmt::join(summed, ","));
}

std::string percent(double share) {
  return fmt::format("{:.1f}%", share * 100.0);
}

std::vector<ReportTable> summary_tables(const Report& report) {
  std::vector<ReportTable> tables{
      ranks_table(report),
      top_functions_table(report, "Top functions by time", [](auto& f) { return double(f.time_total_ns); })};
  for (const auto& function : report.functions)
    tables.push_back(histogram_table(function));
  return tables;
}

std::vector<ReportTable> detail_tables(const Report& report) {
  std::vector<ReportTable> tables{
      top_functions_table(report, "Top functions by calls", [](auto& f) { return double(f.calls); }),
      top_functions_table(report, "Top functions by bytes",
                          [](auto& f) { return double(f.bytes_sent + f.bytes_recv); }),
      communicators_table(report),
      partners_table(report),
      queue_times_table(report),
      concurrency_table(report),
      threads_table(report),
      phases_table(report)};
  for (auto& table : training_steps_tables(report.training_steps))
    tables.push_back(std::move(table));
  tables.push_back(nvtx_phases_table(report));
  tables.push_back(optional_table("MPI_T performance variables", report.mpit));
  tables.push_back(optional_table("CUDA copy paths", report.cuda_copies));
  tables.push_back(optional_table("Runtime decisions", report.runtime_decisions));
  tables.push_back(optional_table("NCCL calls: enqueue and kernel time", report.nccl));
  return tables;
}

} // namespace commlens::analysis::detail
