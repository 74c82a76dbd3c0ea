#include "commlens/analysis/report_format.hpp"
#include "report_tables.hpp"

#include <fmt/format.h>

#include <iterator>

namespace commlens::analysis {
namespace {

// A pipe inside a cell would end it early.
std::string markdown_cell(std::string text) {
  for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
    text.replace(at, 1, "\\|");
  return text;
}

void write_row(fmt::memory_buffer& out, const std::vector<std::string>& cells) {
  fmt::format_to(std::back_inserter(out), "|");
  for (const auto& cell : cells)
    fmt::format_to(std::back_inserter(out), " {} |", markdown_cell(cell));
  fmt::format_to(std::back_inserter(out), "\n");
}

void write_table(fmt::memory_buffer& out, const detail::ReportTable& table) {
  fmt::format_to(std::back_inserter(out), "\n## {}\n\n", table.title);
  if (!table.absent.empty()) {
    fmt::format_to(std::back_inserter(out), "_{}._\n", table.absent);
    return;
  }
  write_row(out, table.headers);
  fmt::format_to(std::back_inserter(out), "|");
  for (std::size_t column = 0; column < table.headers.size(); ++column)
    fmt::format_to(std::back_inserter(out), "{}", column == 0 ? "---|" : "---:|");
  fmt::format_to(std::back_inserter(out), "\n");
  for (const auto& row : table.rows)
    write_row(out, row);
}

} // namespace

std::string render_markdown_report(const Report& report) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "# commlens report: `{}` (schema v{})\n", report.database_path,
                 report.schema_version);
  if (const auto filter = detail::filter_description(report.filter); !filter.empty())
    fmt::format_to(std::back_inserter(out), "\nFilter: {}\n", filter);
  if (const auto warning = detail::missing_ranks_warning(report); !warning.empty())
    fmt::format_to(std::back_inserter(out), "\n> **Warning:** {}\n", warning);
  if (const auto warning = detail::losses_warning(report); !warning.empty())
    fmt::format_to(std::back_inserter(out), "\n> **Warning:** {}\n", warning);
  if (!report.jobs.empty())
    fmt::format_to(std::back_inserter(out), "\nJobs: {}\n", report.jobs);
  if (const auto note = detail::thread_sum_note(report); !note.empty())
    fmt::format_to(std::back_inserter(out), "\nNote: {}\n", note);
  for (const auto& table : detail::summary_tables(report))
    write_table(out, table);
  for (const auto& table : detail::detail_tables(report))
    write_table(out, table);
  return fmt::to_string(out);
}

} // namespace commlens::analysis
