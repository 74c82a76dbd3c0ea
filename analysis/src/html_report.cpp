// The HTML report: one self-contained page (inline style and SVG, no scripts, nothing fetched) that
// opens with the findings, then the few charts that answer questions (time in MPI per rank, the
// functions with the most time, time per training step, who sends to whom through MPI and NCCL, CUDA
// copy paths, message sizes of the functions that move data), then the tables; a contents list
// links every section.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "report_tables.hpp"
#include "svg_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>

namespace commlens::analysis {
namespace {

using detail::html_escape;
using Out = fmt::memory_buffer;

template <typename... Args> void put(Out& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:0 auto;padding:1em 2em;max-width:1100px;color:#222;line-height:1.4}"
    "nav{background:#f4f6f8;border:1px solid #dde;padding:.4em 1em;margin:1em 0}"
    "nav ol{margin:.3em 0;padding-left:1.4em;columns:2}"
    "h2{border-bottom:1px solid #ccd;padding-bottom:.2em;margin-top:1.6em}"
    "a.top{font-size:.7em;font-weight:normal;margin-left:.8em}"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.9em}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    ".table-wrap{overflow-x:auto;max-width:100%}"
    "svg.chart{display:block;max-width:100%;height:auto;margin:.5em 0}"
    ".finding{border-left:4px solid #c44;padding:.2em 1em;margin:1em 0;background:#fcf7f7}"
    ".finding h3{margin:.3em 0}.finding dt{font-weight:bold;float:left;width:5.5em}"
    ".finding dd{margin-left:6em;margin-bottom:.3em}.finding ul{margin:0;padding-left:1.2em}"
    "pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.4em}"
    ".absent{color:#555}.warning{color:#a00}"
    ".charts{display:flex;flex-wrap:wrap;gap:1em 2em}.charts figure{margin:0;max-width:100%}"
    "figcaption{font-weight:bold;font-size:.9em}";

struct Section {
  std::string id;
  std::string title;
};

void heading(Out& out, const Section& section) {
  put(out, "<h2 id=\"{}\">{}<a class=\"top\" href=\"#contents\">contents</a></h2>\n", section.id,
      html_escape(section.title));
}

void write_findings(Out& out, const Report& report) {
  const auto& findings = report.findings;
  heading(out, {"findings", detail::findings_heading(findings)});
  for (std::size_t index = 0; index < findings.findings.size(); ++index) {
    const auto& finding = findings.findings[index];
    put(out, "<article class=\"finding\" id=\"finding-{}\"><h3>{}. {}</h3><dl>\n", index + 1, index + 1,
        html_escape(finding.title));
    put(out, "<dt>Cost</dt><dd>{} <code>{}</code></dd>\n", html_escape(detail::finding_cost(finding)),
        html_escape(finding.id));
    put(out, "<dt>Rule</dt><dd>{}</dd>\n<dt>Evidence</dt><dd><ul>",
        html_escape(detail::finding_threshold(finding)));
    for (const auto& line : finding.evidence)
      put(out, "<li>{}</li>", html_escape(line));
    put(out, "</ul></dd>\n");
    if (!finding.view.empty())
      put(out, "<dt>See</dt><dd>{}</dd>\n", html_escape(finding.view));
    put(out, "<dt>Try</dt><dd>{}</dd>\n", html_escape(finding.advice));
    if (!finding.query.empty())
      put(out, "<dt>Query</dt><dd><pre><code>{}</code></pre></dd>\n", html_escape(finding.query));
    put(out, "</dl></article>\n");
  }
  for (const auto& line : findings.not_analysed)
    put(out, "<p class=\"absent\">Not analysed: {}.</p>\n", html_escape(line));
}

void figure(Out& out, std::string_view caption, const std::string& svg) {
  put(out, "<figure><figcaption>{}</figcaption>\n{}\n</figure>\n", html_escape(caption), svg);
}

const std::vector<detail::ChartSeries> kMpiAndRest = {{"in MPI", "#c44"}, {"outside MPI", "#ccc"}};

void rank_chart(Out& out, const Report& report) {
  std::vector<detail::ChartBar> bars;
  for (const auto& rank : report.ranks) {
    const double share = std::clamp(rank.mpi_share.value_or(0.0), 0.0, 1.0);
    bars.push_back({std::to_string(rank.rank),
                    {share, 1.0 - share},
                    fmt::format("rank {}: {} in MPI, {}", rank.rank, human_duration(double(rank.mpi_ns)),
                                detail::percent(share))});
  }
  figure(out, "Share of each rank's time spent in MPI",
         detail::column_chart(bars, kMpiAndRest,
                              {Unit::Share, "share of the rank's time (MPI_Init to MPI_Finalize)", "rank"}));
}

void function_chart(Out& out, const Report& report) {
  constexpr std::size_t kShown = 10;
  std::vector<detail::ChartBar> bars;
  for (std::size_t index = 0; index < report.functions.size() && index < kShown; ++index) {
    const auto& function = report.functions[index];
    bars.push_back({function.name,
                    {double(function.time_total_ns)},
                    fmt::format("{}: {} in {} calls", function.name,
                                human_duration(double(function.time_total_ns)), function.calls)});
  }
  figure(out, "Functions with the most time",
         detail::horizontal_bar_chart(
             bars, {{"time", "#37a"}},
             {Unit::Nanoseconds, "time in the function, summed over ranks", "function"}));
}

// The first step (a warm-up: allocations, first NCCL or IPC set-up) can be many times the others;
// the scale stops at twice the third quartile and taller columns say their value above them.
void step_chart(Out& out, const TrainingSteps& steps) {
  constexpr std::size_t kShown = 300;
  std::vector<detail::ChartBar> bars;
  for (std::size_t index = 0; index < steps.steps.size() && index < kShown; ++index) {
    const auto& step = steps.steps[index];
    const double mpi = std::min(double(step.mpi_ns), double(step.duration_ns));
    bars.push_back({std::to_string(step.phase),
                    {mpi, double(step.duration_ns) - mpi},
                    fmt::format("phase {}: {}, {} in MPI (mean of ranks)", step.phase,
                                human_duration(double(step.duration_ns)), human_duration(mpi))});
  }
  const auto caption =
      steps.steps.size() > kShown
          ? fmt::format("Time per training step (the first {} of {})", kShown, steps.steps.size())
          : std::string("Time per training step");
  figure(out, caption,
         detail::column_chart(bars, kMpiAndRest,
                              {Unit::Nanoseconds, "step time (slowest rank)", "step (MPI_Pcontrol phase)"},
                              2.0 * double(std::max<std::int64_t>(steps.p75_ns, 1))));
}

void partner_charts(Out& out, const Report& report) {
  if (!report.partners.empty())
    figure(out, "Point-to-point bytes from sender to receiver, MPI and NCCL",
           detail::partner_heat_map(report.partners));
  const bool collective_bytes =
      std::any_of(report.collectives.begin(), report.collectives.end(),
                  [](const auto& rank) { return rank.mpi_bytes + rank.nccl_bytes > 0; });
  if (!collective_bytes)
    return; // barriers only: nothing to draw
  std::vector<detail::ChartBar> bars;
  for (const auto& rank : report.collectives)
    bars.push_back({std::to_string(rank.rank),
                    {double(rank.mpi_bytes), double(rank.nccl_bytes)},
                    fmt::format("rank {}: {} through MPI ({} calls), {} through NCCL ({} calls)", rank.rank,
                                binary_size(rank.mpi_bytes), rank.mpi_calls, binary_size(rank.nccl_bytes),
                                rank.nccl_calls)});
  figure(
      out, "Bytes each rank sent in collectives, MPI and NCCL",
      detail::column_chart(bars, {{"MPI", "#37a"}, {"NCCL", "#7a3"}}, {Unit::Bytes, "bytes sent", "rank"}));
}

void copy_chart(Out& out, const OptionalSection& copies) {
  std::vector<detail::ChartBar> bars;
  for (const auto& row : copies.rows) {
    const auto path = format_cell(row[0], Unit::Text);
    const auto bytes = std::get_if<std::int64_t>(&row[2]);
    bars.push_back({fmt::format("{} ({})", path, format_cell(row[4], Unit::GigabytesPerSecond)),
                    {bytes ? double(*bytes) : 0.0},
                    fmt::format("{}: {} copies, {}, {}", path, format_cell(row[1], Unit::Count),
                                format_cell(row[2], Unit::Bytes), format_cell(row[3], Unit::Nanoseconds))});
  }
  figure(out, "Bytes copied per CUDA copy path (bandwidth)",
         detail::horizontal_bar_chart(bars, {{"bytes", "#a73"}}, {Unit::Bytes, "bytes copied", "path"}));
}

void size_charts(Out& out, const Report& report) {
  put(out, "<div class=\"charts\">\n");
  for (const auto& function : report.functions) {
    if (!detail::moves_data(function))
      continue;
    std::vector<detail::ChartBar> bars;
    for (const auto& bin : function.size_histogram)
      bars.push_back({bin.size_bin < 0 ? std::string("0B") : binary_size(std::uint64_t{1} << bin.size_bin),
                      {double(bin.calls)},
                      fmt::format("{}: {} calls, {}", bin.label, bin.calls,
                                  binary_size(bin.bytes_sent + bin.bytes_recv))});
    figure(
        out, function.name,
        detail::column_chart(bars, {{"calls", "#37a"}}, {Unit::Count, "calls", "message size (bin start)"}));
  }
  put(out, "</div>\n");
}

std::string anchor(std::string_view title) {
  std::string id = "table-";
  for (const char c : title)
    if (std::isalnum(static_cast<unsigned char>(c)))
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (id.back() != '-')
      id += '-';
  return id;
}

void write_table(Out& out, const detail::ReportTable& table) {
  put(out, "<h3 id=\"{}\">{}</h3>\n<div class=\"table-wrap\"><table><tr>", anchor(table.title),
      html_escape(table.title));
  for (const auto& header : table.headers)
    put(out, "<th>{}</th>", html_escape(header));
  put(out, "</tr>\n");
  for (const auto& row : table.rows) {
    put(out, "<tr>");
    for (const auto& cell : row)
      put(out, "<td>{}</td>", html_escape(cell));
    put(out, "</tr>\n");
  }
  put(out, "</table></div>\n");
}

void write_header(Out& out, const Report& report) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>commlens report: {}</title><style>{}</style></head><body>\n"
      "<header><h1>commlens report</h1><p><code>{}</code>: schema v{}; {}</p>\n",
      html_escape(report.database_path), kStyle, html_escape(report.database_path), report.schema_version,
      html_escape(detail::run_summary(report)));
  if (const auto filter = detail::filter_description(report.filter); !filter.empty())
    put(out, "<p>Filter: {}</p>\n", html_escape(filter));
  for (const auto& warning : {detail::missing_ranks_warning(report), detail::losses_warning(report)})
    if (!warning.empty())
      put(out, "<p class=\"warning\"><strong>Warning:</strong> {}</p>\n", html_escape(warning));
  if (!report.jobs.empty())
    put(out, "<p>Jobs: {}</p>\n", html_escape(report.jobs));
  if (const auto note = detail::thread_sum_note(report); !note.empty())
    put(out, "<p>Note: {}</p>\n", html_escape(note));
  put(out, "</header>\n");
}

} // namespace

std::string render_html_report(const Report& report) {
  auto tables = detail::overview_tables(report);
  tables.erase(std::remove_if(tables.begin(), tables.end(),
                              [](const auto& table) { return table.title.starts_with("Message sizes of "); }),
               tables.end());
  for (auto& table : detail::detail_tables(report))
    tables.push_back(std::move(table));
  const bool steps = report.training_steps.absent.empty() && !report.training_steps.steps.empty();
  const bool partners = !report.partners.empty() || !report.collectives.empty();
  const bool copies = report.cuda_copies.absent.empty() && !report.cuda_copies.rows.empty();
  const bool sizes = std::any_of(report.functions.begin(), report.functions.end(), detail::moves_data);
  std::vector<Section> sections = {{"findings", "Findings"}};
  if (!report.ranks.empty())
    sections.push_back({"ranks", "Time in MPI per rank"});
  if (!report.functions.empty())
    sections.push_back({"functions", "Functions with the most time"});
  if (steps)
    sections.push_back({"steps", "Training steps"});
  if (partners)
    sections.push_back({"partners", "Who sends to whom"});
  if (copies)
    sections.push_back({"copies", "CUDA copy paths"});
  if (sizes)
    sections.push_back({"sizes", "Message sizes"});
  sections.push_back({"tables", "Tables"});
  sections.push_back({"run", "Run"});

  Out out;
  write_header(out, report);
  put(out, "<nav id=\"contents\"><strong>Contents</strong><ol>");
  for (const auto& section : sections)
    put(out, "<li><a href=\"#{}\">{}</a></li>", section.id, html_escape(section.title));
  put(out, "</ol></nav>\n<main>\n");
  for (const auto& section : sections) {
    if (section.id == "findings") {
      write_findings(out, report);
      continue;
    }
    heading(out, section);
    if (section.id == "ranks")
      rank_chart(out, report);
    else if (section.id == "functions")
      function_chart(out, report);
    else if (section.id == "steps")
      step_chart(out, report.training_steps);
    else if (section.id == "partners")
      partner_charts(out, report);
    else if (section.id == "copies")
      copy_chart(out, report.cuda_copies);
    else if (section.id == "sizes")
      size_charts(out, report);
    else if (section.id == "tables") {
      for (const auto& table : tables)
        if (table.absent.empty())
          write_table(out, table);
      for (const auto& line : {detail::not_recorded_line(tables), detail::nothing_to_show_line(tables)})
        if (!line.empty())
          put(out, "<p class=\"absent\">{}</p>\n", html_escape(line));
    } else if (section.id == "run") {
      put(out, "<div class=\"table-wrap\"><table><tr><th>key</th><th>value</th></tr>\n");
      for (const auto& [key, value] : report.run)
        put(out, "<tr><td>{}</td><td>{}</td></tr>\n", html_escape(key), html_escape(value));
      put(out, "</table></div>\n");
    }
  }
  put(out, "</main></body></html>\n");
  return fmt::to_string(out);
}

} // namespace commlens::analysis
