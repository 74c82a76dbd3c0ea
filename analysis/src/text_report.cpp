#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace commlens::analysis {
namespace {

using Out = fmt::memory_buffer;

constexpr std::size_t kRunValueWidth = 100;
constexpr std::size_t kHistogramBarWidth = 30;

// Run values may hold multi-line MPI version strings; a report line stays one line.
std::string one_line(std::string value) {
  std::replace(value.begin(), value.end(), '\n', ' ');
  if (value.size() > kRunValueWidth)
    value = value.substr(0, kRunValueWidth - 3) + "...";
  return value;
}

using detail::percent;

template <typename... Args> void put(Out& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

void write_header(Out& out, const Report& report) {
  put(out, "commlens report: {} (schema v{}; {})\n", report.database_path, report.schema_version,
      detail::run_summary(report));
  if (const auto filter = detail::filter_description(report.filter); !filter.empty())
    put(out, "  filter: {}\n", filter);
  if (const auto warning = detail::missing_ranks_warning(report); !warning.empty())
    put(out, "  WARNING: {}\n", warning);
  if (const auto warning = detail::losses_warning(report); !warning.empty())
    put(out, "  WARNING: {}\n", warning);
  if (!report.jobs.empty())
    put(out, "  jobs: {}\n", report.jobs);
}

void write_finding(Out& out, std::size_t number, const Finding& finding, bool brief) {
  put(out, "  {}. {}\n", number, finding.title);
  put(out, "     cost: {}  [{}]\n", detail::finding_cost(finding), finding.id);
  if (brief)
    return;
  put(out, "     rule: {}\n", detail::finding_threshold(finding));
  for (std::size_t line = 0; line < finding.evidence.size(); ++line)
    put(out, "     {} {}\n", line == 0 ? "evidence:" : "         ", finding.evidence[line]);
  if (!finding.view.empty())
    put(out, "     see: {}\n", finding.view);
  if (!finding.query.empty())
    put(out, "     query: {}\n", finding.query);
  put(out, "     try: {}\n", finding.advice);
}

void write_findings(Out& out, const Report& report, bool brief) {
  const auto& findings = report.findings;
  put(out, "\n{}\n", detail::findings_heading(findings));
  for (std::size_t index = 0; index < findings.findings.size(); ++index)
    write_finding(out, index + 1, findings.findings[index], brief);
  if (!brief)
    for (const auto& line : findings.not_analysed)
      put(out, "  not analysed: {}\n", line);
}

void write_spreads(Out& out, const Report& report) {
  if (const auto& time = report.mpi_time_spread)
    put(out, "  across ranks: time in MPI min {} (rank {}), mean {}, max {} (rank {}), imbalance {}\n",
        human_duration(time->min), time->min_rank, human_duration(time->mean), human_duration(time->max),
        time->max_rank, percent(time->imbalance));
  if (const auto& share = report.mpi_share_spread)
    put(out, "  across ranks: share in MPI min {} (rank {}), mean {}, max {} (rank {})\n",
        percent(share->min), share->min_rank, percent(share->mean), percent(share->max), share->max_rank);
}

void write_rank_times(Out& out, const Report& report, bool brief) {
  if (report.ranks.empty()) {
    put(out, "\nTime in MPI per rank: no ranks recorded.\n");
    return;
  }
  put(out, "\nTime in MPI per rank\n");
  if (!brief) {
    put(out, "  {:>5}  {:<16} {:>12} {:>12} {:>7} {:>10}\n", "rank", "host", "application", "MPI", "share",
        "calls");
    for (const auto& rank : report.ranks)
      put(out, "  {:>5}  {:<16} {:>12} {:>12} {:>7} {:>10}\n", rank.rank, rank.host,
          rank.application_ns ? human_duration(double(*rank.application_ns)) : "unknown",
          human_duration(double(rank.mpi_ns)), rank.mpi_share ? percent(*rank.mpi_share) : "-", rank.calls);
  }
  if (const auto note = detail::thread_sum_note(report); !note.empty())
    put(out, "  note: {}\n", note);
  write_spreads(out, report);
}

void write_functions(Out& out, const Report& report, const TextReportOptions& options) {
  if (report.functions.empty()) {
    put(out, "\nMPI functions: no calls recorded.\n");
    return;
  }
  const std::size_t shown =
      options.brief ? std::min(options.brief_functions, report.functions.size()) : report.functions.size();
  put(out, "\nMPI and NCCL functions by time\n");
  put(out, "  {:<24} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>7}\n", "function", "calls", "sent",
      "received", "total", "min", "max", "of MPI");
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& function = report.functions[i];
    put(out, "  {:<24} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>7}\n", function.name, function.calls,
        binary_size(function.bytes_sent), binary_size(function.bytes_recv),
        human_duration(double(function.time_total_ns)), human_duration(double(function.time_min_ns)),
        human_duration(double(function.time_max_ns)), percent(function.share_of_mpi_time));
  }
  if (shown < report.functions.size())
    put(out, "  ... and {} more functions (commlens report)\n", report.functions.size() - shown);
}

// Only the functions that move data: a histogram of zero-byte calls says nothing.
void write_size_histograms(Out& out, const Report& report) {
  if (std::none_of(report.functions.begin(), report.functions.end(), detail::moves_data))
    return;
  put(out, "\nMessage sizes of the functions that move data (calls, bytes sent + received, time)\n");
  for (const auto& function : report.functions) {
    if (!detail::moves_data(function))
      continue;
    put(out, "  {}\n", function.name);
    std::uint64_t most_calls = 1;
    for (const auto& bin : function.size_histogram)
      most_calls = std::max(most_calls, bin.calls);
    for (const auto& bin : function.size_histogram) {
      const auto bar =
          static_cast<std::size_t>((bin.calls * kHistogramBarWidth + most_calls - 1) / most_calls);
      put(out, "    {:<18} {:>10} {:>10} {:>12}  {}\n", bin.label, bin.calls,
          binary_size(bin.bytes_sent + bin.bytes_recv), human_duration(double(bin.time_total_ns)),
          std::string(bar, '#'));
    }
  }
}

void write_drops(Out& out, const Report& report) {
  if (report.dropped_events == 0 && report.summary_overflow == 0)
    return;
  put(out, "\nDropped events: {} trace events lost (writer behind), {} calls not counted (summary full)\n",
      report.dropped_events, report.summary_overflow);
  for (const auto& rank : report.ranks)
    if (rank.dropped_events != 0 || rank.summary_overflow != 0)
      put(out, "  rank {}: {} lost, {} not counted\n", rank.rank, rank.dropped_events, rank.summary_overflow);
}

// Columns as wide as their widest cell; the first left-aligned (names), the rest right (numbers).
void write_table(Out& out, const detail::ReportTable& table) {
  put(out, "\n{}\n", table.title);
  std::vector<std::size_t> widths(table.headers.size());
  for (std::size_t column = 0; column < widths.size(); ++column) {
    widths[column] = table.headers[column].size();
    for (const auto& row : table.rows)
      widths[column] = std::max(widths[column], row[column].size());
  }
  const auto write_row = [&](const std::vector<std::string>& cells) {
    put(out, " ");
    for (std::size_t column = 0; column < cells.size(); ++column)
      if (column == 0)
        put(out, " {:<{}}", cells[column], widths[column]);
      else
        put(out, "  {:>{}}", cells[column], widths[column]);
    put(out, "\n");
  };
  write_row(table.headers);
  for (const auto& row : table.rows)
    write_row(row);
}

void write_run(Out& out, const Report& report) {
  put(out, "\nRun\n");
  for (const auto& [key, value] : report.run)
    put(out, "  {}: {}\n", key, one_line(value));
}

} // namespace

std::string human_duration(double nanoseconds) {
  if (nanoseconds >= 1e9)
    return fmt::format("{:.3f} s", nanoseconds / 1e9);
  if (nanoseconds >= 1e6)
    return fmt::format("{:.3f} ms", nanoseconds / 1e6);
  if (nanoseconds >= 1e3)
    return fmt::format("{:.3f} us", nanoseconds / 1e3);
  return fmt::format("{:.0f} ns", nanoseconds);
}

std::string render_text_report(const Report& report, const TextReportOptions& options) {
  Out out;
  write_header(out, report);
  write_findings(out, report, options.brief);
  write_rank_times(out, report, options.brief);
  write_functions(out, report, options);
  write_drops(out, report);
  if (options.brief)
    return fmt::to_string(out);
  write_size_histograms(out, report);
  const auto tables = detail::detail_tables(report);
  for (const auto& table : tables)
    if (table.absent.empty())
      write_table(out, table);
  write_run(out, report);
  for (const auto& line : {detail::not_recorded_line(tables), detail::nothing_to_show_line(tables)})
    if (!line.empty())
      put(out, "\n{}\n", line);
  return fmt::to_string(out);
}

} // namespace commlens::analysis
