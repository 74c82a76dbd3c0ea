// `commlens compare A B [--format text|json]` and
// `commlens compare DB --implementations mpi,runtime:ring`
#include "analyse/analysis_input.hpp"
#include "commands.hpp"
#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/errors.hpp"

#include <fmt/format.h>

namespace commlens::cli {
namespace {

struct CompareArguments {
  std::string a;
  std::string b;
  std::string implementations; // "A,B"
  std::string format = "text";
  bool allow_missing_ranks = false;
};

analysis::Comparison run_comparison(const CompareArguments& arguments) {
  if (!arguments.implementations.empty()) {
    if (!arguments.b.empty())
      throw analysis::AnalysisError("compare --implementations takes one database");
    const auto comma = arguments.implementations.find(',');
    if (comma == std::string::npos)
      throw analysis::AnalysisError("--implementations: expected two names, A,B (e.g. mpi,runtime:ring)");
    const auto database = open_for_analysis(arguments.a, arguments.allow_missing_ranks);
    return analysis::compare_implementations(database, arguments.implementations.substr(0, comma),
                                             arguments.implementations.substr(comma + 1));
  }
  if (arguments.b.empty())
    throw analysis::AnalysisError("compare takes two databases, A and B (or one with --implementations)");
  const auto a = open_for_analysis(arguments.a, arguments.allow_missing_ranks);
  const auto b = open_for_analysis(arguments.b, arguments.allow_missing_ranks);
  return analysis::compare_databases(a, b);
}

} // namespace

void add_compare_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<CompareArguments>();
  auto* command = app.add_subcommand(
      "compare", "Per function and message-size bin: calls, time, median and p95 of A and B, and B/A ratios");
  command->add_option("A", arguments->a, "The first database, or a run's output directory")->required();
  command->add_option("B", arguments->b, "The second (none with --implementations)");
  command->add_option("--implementations", arguments->implementations,
                      "Compare two implementations inside one trace database, e.g. mpi,runtime:ring");
  command->add_option("--format", arguments->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_allow_missing_ranks_flag(*command, arguments->allow_missing_ranks);
  set_exit_status_help(*command, "compared");
  command->callback([arguments, &exit_status] {
    const auto comparison = run_comparison(*arguments);
    fmt::print("{}", arguments->format == "json" ? analysis::render_comparison_json(comparison)
                                                 : analysis::render_comparison_text(comparison));
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
