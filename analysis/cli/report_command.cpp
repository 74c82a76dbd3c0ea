// `commlens report DB [--rank R] [--phase P] [--format text|json|markdown|html]`
#include "commands.hpp"
#include "commlens/analysis/report_format.hpp"
#include "terminal_progress.hpp"

#include <fmt/format.h>

namespace commlens::cli {
namespace {

std::string render(const analysis::Report& report, const std::string& format) {
  if (format == "json")
    return analysis::render_json_report(report);
  if (format == "markdown")
    return analysis::render_markdown_report(report);
  if (format == "html")
    return analysis::render_html_report(report);
  return analysis::render_text_report(report);
}

struct ReportArguments {
  std::string database;
  int rank = 0;
  int phase = 0;
  std::string format = "text";
};

} // namespace

void add_report_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<ReportArguments>();
  auto* command = app.add_subcommand("report", "Summarize a commlens database: time in MPI per rank, "
                                               "functions, communicators, histograms, partners, queue times, "
                                               "concurrency, phases");
  command->add_option("database", arguments->database, "commlens.sqlite or a rank file")->required();
  auto* rank = command->add_option("--rank", arguments->rank, "Only this world rank");
  auto* phase = command->add_option("--phase", arguments->phase, "Only this MPI_Pcontrol phase");
  command->add_option("--format", arguments->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}))
      ->capture_default_str();

  command->callback([arguments, rank, phase, &exit_status] {
    analysis::ReportFilter filter;
    if (*rank)
      filter.rank = arguments->rank;
    if (*phase)
      filter.phase = arguments->phase;
    const analysis::Database database(arguments->database);
    database.require_events();
    const auto report = analysis::build_report(database, filter, terminal_progress("report"));
    fmt::print("{}", render(report, arguments->format));
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
