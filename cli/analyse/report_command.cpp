// `commlens report DB|DIR [--rank R] [--phase P] [--format text|json|markdown|html]`
#include "analyse/analysis_input.hpp"
#include "commands.hpp"
#include "commlens/analysis/report_format.hpp"
#include "terminal_progress.hpp"

#include <fmt/format.h>

#include <charconv>

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

// --phase takes either kind of phase: digits name an MPI_Pcontrol phase, anything else an NVTX
// range path.
void set_phase_filter(analysis::ReportFilter& filter, const std::string& phase) {
  int number = 0;
  const auto [end, error] = std::from_chars(phase.data(), phase.data() + phase.size(), number);
  if (error == std::errc{} && end == phase.data() + phase.size())
    filter.phase = number;
  else
    filter.nvtx_range = phase;
}

struct ReportArguments {
  std::string database;
  int rank = 0;
  std::string phase;
  std::string format = "text";
  bool allow_missing_ranks = false;
};

} // namespace

void add_report_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<ReportArguments>();
  auto* command = app.add_subcommand(
      "report",
      "What is wrong in a run (findings, most costly first), then its figures: time in MPI per rank, "
      "functions, message sizes, communicators, partners, phases, steps, MPI_T, CUDA, NCCL");
  command
      ->add_option("database", arguments->database,
                   "commlens.sqlite, a rank file, or the run's output directory (its commlens.sqlite)")
      ->required();
  auto* rank = command->add_option("--rank", arguments->rank, "Only this world rank");
  auto* phase = command->add_option("--phase", arguments->phase,
                                    "Only this phase: a number selects an MPI_Pcontrol phase, a name a user "
                                    "NVTX range path (\"train\", \"train/step\"; trace mode)");
  command->add_option("--format", arguments->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}))
      ->capture_default_str();
  add_allow_missing_ranks_flag(*command, arguments->allow_missing_ranks);
  set_exit_status_help(*command, "the report was printed (findings are not failures: `commlens check` "
                                 "fails CI on them)");

  command->callback([arguments, rank, phase, &exit_status] {
    analysis::ReportFilter filter;
    if (*rank)
      filter.rank = arguments->rank;
    if (*phase)
      set_phase_filter(filter, arguments->phase);
    const auto database = open_for_analysis(arguments->database, arguments->allow_missing_ranks);
    const auto report = analysis::build_report(database, filter, terminal_progress("report"));
    fmt::print("{}", render(report, arguments->format));
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
