// `commlens check --baseline FILE DB [--tolerance count=5%,bytes=0,finding=25%] [--junit FILE]`: the
// CI gate.
#include "analyse/analysis_input.hpp"
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/histogram_baseline.hpp"

#include <fmt/format.h>

#include <fstream>

namespace commlens::cli {
namespace {

struct CheckArguments {
  std::string baseline;
  std::string database;
  std::string tolerance;
  std::string junit;
  bool allow_missing_ranks = false;
};

} // namespace

void add_check_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<CheckArguments>();
  auto* command = app.add_subcommand(
      "check", "Compare a run's message-size histograms and findings with a baseline, for CI");
  command->add_option("--baseline", arguments->baseline, "Baseline from `commlens histogram --save`")
      ->required();
  command
      ->add_option("database", arguments->database,
                   "commlens.sqlite of the run to check, or its output "
                   "directory")
      ->required();
  command->add_option("--tolerance", arguments->tolerance,
                      "Allowed relative change per metric, e.g. count=5%,bytes=0.1,finding=50% (default: "
                      "calls and bytes exact, a finding's cost may grow 25%)");
  command->add_option("--junit", arguments->junit, "Also write the verdict as JUnit XML to this file");
  add_allow_missing_ranks_flag(*command, arguments->allow_missing_ranks);
  command->footer(
      "A regression is a new function, a new size bin, a bin or function gone, a bin whose calls or bytes\n"
      "changed beyond the tolerance, a new finding, or a finding whose share of the ranks' time grew beyond\n"
      "it. A Markdown summary goes to stdout for CI logs.\n\n"
      "Exit status:\n  0  the run matches the baseline\n  1  a regression\n  2  bad input or usage: an "
      "unreadable or foreign database or baseline, a bad --tolerance");
  command->callback([arguments, &exit_status] {
    const auto tolerance = analysis::parse_tolerance(arguments->tolerance);
    const auto baseline = analysis::load_baseline(arguments->baseline);
    const auto database = open_for_analysis(arguments->database, arguments->allow_missing_ranks);
    const auto current = analysis::baseline_of(database);
    auto regressions = analysis::compare_histograms(baseline.histograms, current.histograms, tolerance);
    if (baseline.findings) {
      const auto findings = analysis::compare_findings(*baseline.findings, *current.findings, tolerance);
      regressions.insert(regressions.end(), findings.begin(), findings.end());
    }
    fmt::print("{}", analysis::render_check_markdown(regressions, baseline, current));
    if (!arguments->junit.empty()) {
      std::ofstream out(arguments->junit);
      if (!(out << analysis::render_check_junit(regressions, baseline, current)))
        throw analysis::AnalysisError(arguments->junit + ": cannot write JUnit XML");
    }
    exit_status = regressions.empty() ? kSuccess : kRegression;
  });
}

} // namespace commlens::cli
