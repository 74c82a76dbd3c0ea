#include "report_tables.hpp"

#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commlens::analysis::detail {
namespace {

ReportTable make_table(std::string title, std::vector<std::string> headers) {
  ReportTable table;
  table.title = std::move(title);
  table.headers = std::move(headers);
  return table;
}

std::string duration(std::int64_t nanoseconds) {
  return human_duration(static_cast<double>(nanoseconds));
}

ReportTable ranks_table(const Report& report) {
  auto table = make_table("Time in MPI per rank", {"rank", "host", "application", "MPI", "share", "calls"});
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

ReportTable functions_table(const Report& report) {
  auto table = make_table("MPI and NCCL functions by time",
                          {"function", "calls", "sent", "received", "total", "min", "max", "of MPI"});
  if (report.functions.empty())
    table.absent = "no calls recorded";
  for (const auto& function : report.functions)
    table.rows.push_back({function.name, std::to_string(function.calls), binary_size(function.bytes_sent),
                          binary_size(function.bytes_recv), duration(function.time_total_ns),
                          duration(function.time_min_ns), duration(function.time_max_ns),
                          percent(function.share_of_mpi_time)});
  return table;
}

ReportTable histogram_table(const FunctionStats& function) {
  auto table = make_table("Message sizes of " + function.name, {"size", "calls", "bytes", "time"});
  for (const auto& bin : function.size_histogram)
    table.rows.push_back({bin.label, std::to_string(bin.calls), binary_size(bin.bytes_sent + bin.bytes_recv),
                          duration(bin.time_total_ns)});
  return table;
}

ReportTable communicators_table(const Report& report) {
  auto table = make_table("Per communicator", {"communicator", "size", "calls", "bytes", "time"});
  if (report.communicators.empty())
    table.absent = "no calls recorded";
  for (const auto& communicator : report.communicators)
    table.rows.push_back({communicator.label, communicator.size > 0 ? std::to_string(communicator.size) : "-",
                          std::to_string(communicator.calls), binary_size(communicator.bytes),
                          duration(communicator.time_total_ns)});
  return table;
}

ReportTable partners_table(const Report& report) {
  auto table = make_table("Point-to-point partners, MPI and NCCL (sender to receiver)",
                          {"from", "to", "messages", "bytes", "of it NCCL"});
  if (report.partners.empty())
    table.absent = "no point-to-point messages with data";
  for (const auto& partner : report.partners)
    table.rows.push_back({std::to_string(partner.from), std::to_string(partner.to),
                          std::to_string(partner.messages), binary_size(partner.bytes),
                          binary_size(partner.nccl_bytes)});
  return table;
}

ReportTable collectives_table(const Report& report) {
  auto table = make_table("Collectives per rank, MPI and NCCL (bytes each rank sent)",
                          {"rank", "MPI calls", "MPI bytes", "NCCL calls", "NCCL bytes"});
  if (report.collectives.empty())
    table.absent = "no collective calls";
  for (const auto& rank : report.collectives)
    table.rows.push_back({std::to_string(rank.rank), std::to_string(rank.mpi_calls),
                          binary_size(rank.mpi_bytes), std::to_string(rank.nccl_calls),
                          binary_size(rank.nccl_bytes)});
  return table;
}

ReportTable with_absence(ReportTable table, const Absence& absence) {
  table.absent = absence.reason;
  table.how_to_record = absence.how_to_record;
  return table;
}

ReportTable queue_times_table(const Report& report) {
  auto table = make_table("Request queue times (post to completion)",
                          {"function", "operations", "median", "p95", "max"});
  for (const auto& queue : report.queue_times)
    table.rows.push_back({queue.function, std::to_string(queue.operations), duration(queue.median_ns),
                          duration(queue.p95_ns), duration(queue.max_ns)});
  return with_absence(std::move(table), report.queue_times_absent);
}

ReportTable concurrency_table(const Report& report) {
  auto table = make_table("Concurrent MPI calls across threads",
                          {"rank", "threads", "most in flight", "time with 2+ in flight"});
  for (const auto& rank : report.concurrency)
    table.rows.push_back({std::to_string(rank.rank), std::to_string(rank.threads),
                          std::to_string(rank.max_in_flight), duration(rank.overlapped_ns)});
  return with_absence(std::move(table), report.concurrency_absent);
}

ReportTable threads_table(const Report& report) {
  auto table = make_table("Time in MPI per thread", {"rank", "thread", "calls", "MPI", "share"});
  for (const auto& thread : report.threads)
    table.rows.push_back({std::to_string(thread.rank), std::to_string(thread.thread),
                          std::to_string(thread.calls), duration(thread.mpi_ns),
                          thread.mpi_share ? percent(*thread.mpi_share) : "-"});
  return with_absence(std::move(table), report.threads_absent);
}

// Starts from the run's start (phase starts are on rank 0's clock, which a rank that started
// first precedes), with each phase's length.
ReportTable phases_table(const Report& report) {
  auto table = make_table("Phases (MPI_Pcontrol)", {"phase", "ranks", "start", "length", "calls", "bytes",
                                                    "time in MPI", "top functions"});
  if (report.phases.empty())
    table.absent = "no phases recorded";
  for (const auto& phase : report.phases)
    table.rows.push_back({std::to_string(phase.phase), std::to_string(phase.ranks),
                          duration(phase.start_ns - report.run_start_ns),
                          phase.end_ns ? duration(*phase.end_ns - phase.start_ns) : "open",
                          std::to_string(phase.calls), binary_size(phase.bytes),
                          duration(phase.time_total_ns),
                          fmt::format("{}", fmt::join(phase.top_functions, ", "))});
  return table;
}

ReportTable nvtx_phases_table(const Report& report) {
  auto table = make_table("Phases (user NVTX ranges)", {"range", "ranks", "ranges", "range time", "calls",
                                                        "bytes", "time in MPI", "top functions"});
  if (!report.nvtx_calls_placed) { // summary mode: calls carry no times, so no range holds them
    table.title += report.trace_mode ? "" : ", without the calls in them (summary mode)";
    table.headers.resize(4);
  }
  for (const auto& phase : report.nvtx_phases) {
    table.rows.push_back({phase.path, std::to_string(phase.ranks), std::to_string(phase.ranges),
                          duration(phase.range_time_ns)});
    if (report.nvtx_calls_placed)
      table.rows.back().insert(table.rows.back().end(),
                               {std::to_string(phase.calls), binary_size(phase.bytes),
                                duration(phase.time_total_ns),
                                fmt::format("{}", fmt::join(phase.top_functions, ", "))});
  }
  return with_absence(std::move(table), report.nvtx_phases_absent);
}

} // namespace

ReportTable table_of(std::string title, const OptionalSection& section) {
  auto table = make_table(std::move(title), {});
  table.absent = section.absent.reason;
  table.how_to_record = section.absent.how_to_record;
  for (const auto& column : section.columns)
    table.headers.push_back(column.title);
  for (const auto& row : section.rows) {
    auto& cells = table.rows.emplace_back();
    for (std::size_t column = 0; column < row.size() && column < section.columns.size(); ++column)
      cells.push_back(format_cell(row[column], section.columns[column].unit));
  }
  return table;
}

bool moves_data(const FunctionStats& function) {
  return function.bytes_sent + function.bytes_recv > 0;
}

std::vector<ReportTable> overview_tables(const Report& report) {
  std::vector<ReportTable> tables{ranks_table(report), functions_table(report)};
  for (const auto& function : report.functions)
    if (moves_data(function))
      tables.push_back(histogram_table(function));
  return tables;
}

std::vector<ReportTable> detail_tables(const Report& report) {
  std::vector<ReportTable> tables{communicators_table(report), partners_table(report),
                                  collectives_table(report),   queue_times_table(report),
                                  concurrency_table(report),   threads_table(report),
                                  phases_table(report)};
  for (auto& table : training_steps_tables(report.training_steps))
    tables.push_back(std::move(table));
  tables.push_back(nvtx_phases_table(report));
  tables.push_back(table_of("MPI_T performance variables", report.mpit));
  tables.push_back(table_of("CUDA copy paths", report.cuda_copies));
  tables.push_back(table_of("GPU runtime decisions", report.runtime_decisions));
  tables.push_back(table_of("NCCL calls: enqueue and device time", report.nccl));
  return tables;
}

} // namespace commlens::analysis::detail
