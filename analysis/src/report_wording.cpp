// Sentences every report format shares: the header's run summary, warnings, the findings' cost and
// threshold, and the closing lines that gather the sections without rows.
#include "commlens/analysis/report_format.hpp"
#include "report_tables.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace commlens::analysis::detail {
namespace {

std::string absent_line(const std::vector<ReportTable>& tables, bool recorded, std::string_view heading) {
  std::vector<std::string> parts;
  for (const auto& table : tables)
    if (!table.absent.empty() && table.how_to_record.empty() == recorded)
      parts.push_back(fmt::format("{} ({})", table.title, recorded ? table.absent : table.how_to_record));
  return parts.empty() ? std::string() : fmt::format("{}: {}.", heading, fmt::join(parts, "; "));
}

} // namespace

std::string not_recorded_line(const std::vector<ReportTable>& tables) {
  return absent_line(tables, false, "Not recorded");
}

std::string nothing_to_show_line(const std::vector<ReportTable>& tables) {
  return absent_line(tables, true, "Nothing to show");
}

std::string run_summary(const Report& report) {
  std::int64_t longest = 0;
  for (const auto& rank : report.ranks)
    longest = std::max(longest, rank.application_ns.value_or(0));
  auto summary = fmt::format("{}, {} rank{}", report.trace_mode ? "trace mode" : "summary mode",
                             report.ranks.size(), report.ranks.size() == 1 ? "" : "s");
  if (longest > 0)
    summary += fmt::format(", {} from MPI_Init to MPI_Finalize", human_duration(double(longest)));
  return summary;
}

std::string finding_cost(const Finding& finding) {
  return fmt::format("{}, {} of {}", human_duration(double(finding.cost_ns)), percent(finding.cost_share),
                     finding.cost_base);
}

std::string finding_threshold(const Finding& finding) {
  return fmt::format("{}: {} (threshold {})", finding.measure, format_value(finding.measured, finding.unit),
                     format_value(finding.threshold, finding.unit));
}

std::string findings_heading(const FindingsSection& findings) {
  if (findings.findings.empty())
    return "Findings: none (no rule reached its threshold)";
  return fmt::format("Findings: {}, most costly first", findings.findings.size());
}

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

} // namespace commlens::analysis::detail
