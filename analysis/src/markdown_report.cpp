#include "commlens/analysis/report_format.hpp"
#include "report_tables.hpp"

#include <fmt/format.h>

#include <iterator>

namespace commlens::analysis {
namespace {

using Out = fmt::memory_buffer;

template <typename... Args> void put(Out& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// A pipe inside a cell would end it early.
std::string markdown_cell(std::string text) {
  for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
    text.replace(at, 1, "\\|");
  return text;
}

void write_row(Out& out, const std::vector<std::string>& cells) {
  put(out, "|");
  for (const auto& cell : cells)
    put(out, " {} |", markdown_cell(cell));
  put(out, "\n");
}

void write_table(Out& out, const detail::ReportTable& table) {
  put(out, "\n## {}\n\n", table.title);
  write_row(out, table.headers);
  put(out, "|");
  for (std::size_t column = 0; column < table.headers.size(); ++column)
    put(out, "{}", column == 0 ? "---|" : "---:|");
  put(out, "\n");
  for (const auto& row : table.rows)
    write_row(out, row);
}

void write_findings(Out& out, const Report& report) {
  const auto& findings = report.findings;
  put(out, "\n## {}\n", detail::findings_heading(findings));
  for (std::size_t index = 0; index < findings.findings.size(); ++index) {
    const auto& finding = findings.findings[index];
    put(out, "\n### {}. {}\n\n", index + 1, finding.title);
    put(out, "- **Cost:** {} (`{}`)\n", detail::finding_cost(finding), finding.id);
    put(out, "- **Rule:** {}\n", detail::finding_threshold(finding));
    put(out, "- **Evidence:**\n");
    for (const auto& line : finding.evidence)
      put(out, "  - {}\n", line);
    if (!finding.view.empty())
      put(out, "- **See:** {}\n", finding.view);
    put(out, "- **Try:** {}\n", finding.advice);
    if (!finding.query.empty())
      put(out, "\n```sql\n{}\n```\n", finding.query);
  }
  for (const auto& line : findings.not_analysed)
    put(out, "\n_Not analysed: {}._\n", line);
}

} // namespace

std::string render_markdown_report(const Report& report) {
  Out out;
  put(out, "# commlens report: `{}`\n\nSchema v{}; {}.\n", report.database_path, report.schema_version,
      detail::run_summary(report));
  if (const auto filter = detail::filter_description(report.filter); !filter.empty())
    put(out, "\nFilter: {}\n", filter);
  if (const auto warning = detail::missing_ranks_warning(report); !warning.empty())
    put(out, "\n> **Warning:** {}\n", warning);
  if (const auto warning = detail::losses_warning(report); !warning.empty())
    put(out, "\n> **Warning:** {}\n", warning);
  if (!report.jobs.empty())
    put(out, "\nJobs: {}\n", report.jobs);
  if (const auto note = detail::thread_sum_note(report); !note.empty())
    put(out, "\nNote: {}\n", note);
  write_findings(out, report);
  auto tables = detail::overview_tables(report);
  for (auto& table : detail::detail_tables(report))
    tables.push_back(std::move(table));
  for (const auto& table : tables)
    if (table.absent.empty())
      write_table(out, table);
  for (const auto& line : {detail::not_recorded_line(tables), detail::nothing_to_show_line(tables)})
    if (!line.empty())
      put(out, "\n{}\n", line);
  return fmt::to_string(out);
}

} // namespace commlens::analysis
