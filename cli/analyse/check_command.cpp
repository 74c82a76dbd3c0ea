// `commlens check --baseline FILE DB [--tolerance count=5%,bytes=0] [--junit FILE]`: the CI gate.
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
      "check",
      "Compare a run's message-size histograms with a baseline: exit 0 match, 1 regression, 2 bad input");
  command->add_option("--baseline", arguments->baseline, "Baseline from `commlens histogram --save`")
      ->required();
  command->add_option("database", arguments->database, "commlens.sqlite of the run to check")->required();
  command->add_option("--tolerance", arguments->tolerance,
                      "Allowed relative change per metric, e.g. count=5%,bytes=0.1 (default: exact)");
  command->add_option("--junit", arguments->junit, "Also write the verdict as JUnit XML to this file");
  add_allow_missing_ranks_flag(*command, arguments->allow_missing_ranks);
  command->footer(
      "A regression is a new function, a new size bin, a bin or function gone, or a bin whose calls or\n"
      "bytes changed beyond the tolerance. A Markdown summary goes to stdout for CI logs.");
  command->callback([arguments, &exit_status] {
    const auto tolerance = analysis::parse_tolerance(arguments->tolerance);
    const auto baseline = analysis::load_histograms(arguments->baseline);
    const auto database = open_for_analysis(arguments->database, arguments->allow_missing_ranks);
    const auto current = analysis::histograms_of(database);
    const auto regressions = analysis::compare_histograms(baseline, current, tolerance);
    fmt::print("{}", analysis::render_check_markdown(regressions, current));
    if (!arguments->junit.empty()) {
      std::ofstream out(arguments->junit);
      if (!(out << analysis::render_check_junit(regressions, baseline, current)))
        throw analysis::AnalysisError(arguments->junit + ": cannot write JUnit XML");
    }
    exit_status = regressions.empty() ? kSuccess : kRegression;
  });
}

} // namespace commlens::cli
