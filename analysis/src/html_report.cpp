#include "commlens/analysis/report_format.hpp"
#include "report_tables.hpp"
#include "svg_plots.hpp"

#include <fmt/format.h>

#include <iterator>

namespace commlens::analysis {
namespace {

// Inline style only: the file is opened offline, attached to tickets, archived by CI.
constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px "
    "8px;text-align:right}td:first-child,th:first-child{text-align:left}"
    ".absent{color:#666;font-style:italic}";

void write_table(fmt::memory_buffer& out, const detail::ReportTable& table) {
  fmt::format_to(std::back_inserter(out), "<h2>{}</h2>\n", detail::html_escape(table.title));
  if (!table.absent.empty()) {
    fmt::format_to(std::back_inserter(out), "<p class=\"absent\">{}.</p>\n",
                   detail::html_escape(table.absent));
    return;
  }
  fmt::format_to(std::back_inserter(out), "<table><tr>");
  for (const auto& header : table.headers)
    fmt::format_to(std::back_inserter(out), "<th>{}</th>", detail::html_escape(header));
  fmt::format_to(std::back_inserter(out), "</tr>\n");
  for (const auto& row : table.rows) {
    fmt::format_to(std::back_inserter(out), "<tr>");
    for (const auto& cell : row)
      fmt::format_to(std::back_inserter(out), "<td>{}</td>", detail::html_escape(cell));
    fmt::format_to(std::back_inserter(out), "</tr>\n");
  }
  fmt::format_to(std::back_inserter(out), "</table>\n");
}

void write_plots(fmt::memory_buffer& out, const Report& report) {
  if (!report.ranks.empty())
    fmt::format_to(std::back_inserter(out), "<h2>Share of time in MPI</h2>\n{}\n",
                   detail::svg_time_shares(report.ranks));
  if (!report.partners.empty())
    fmt::format_to(std::back_inserter(out),
                   "<h2>Partner heat map (bytes, sender row to receiver column)</h2>\n{}\n",
                   detail::svg_partner_heat_map(report.partners));
  if (report.training_steps.absent.empty() && !report.training_steps.steps.empty())
    fmt::format_to(std::back_inserter(out), "<h2>Training steps: time per step</h2>\n{}\n",
                   detail::svg_step_times(report.training_steps));
  for (const auto& function : report.functions)
    fmt::format_to(std::back_inserter(out), "<h3>Message sizes of {}</h3>\n{}\n",
                   detail::html_escape(function.name), detail::svg_size_histogram(function));
}

} // namespace

std::string render_html_report(const Report& report) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out),
                 "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>commlens report</title>"
                 "<style>{}</style></head><body>\n<h1>commlens report: {} (schema v{})</h1>\n",
                 kStyle, detail::html_escape(report.database_path), report.schema_version);
  for (const auto& warning : {detail::missing_ranks_warning(report), detail::losses_warning(report)})
    if (!warning.empty())
      fmt::format_to(std::back_inserter(out), "<p><strong>Warning:</strong> {}</p>\n",
                     detail::html_escape(warning));
  if (!report.jobs.empty())
    fmt::format_to(std::back_inserter(out), "<p>Jobs: {}</p>\n", detail::html_escape(report.jobs));
  if (const auto note = detail::thread_sum_note(report); !note.empty())
    fmt::format_to(std::back_inserter(out), "<p>Note: {}</p>\n", detail::html_escape(note));
  write_plots(out, report);
  for (const auto& table : detail::summary_tables(report))
    write_table(out, table);
  for (const auto& table : detail::detail_tables(report))
    write_table(out, table);
  fmt::format_to(std::back_inserter(out), "</body></html>\n");
  return fmt::to_string(out);
}

} // namespace commlens::analysis
