// `commlens histogram DB [--save baseline.json]`: the message-size histograms under stable keys and
// the findings under their ids: what `commlens check` compares a run with.
#include "analyse/analysis_input.hpp"
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/histogram_baseline.hpp"

#include <fmt/format.h>

#include <fstream>

namespace commlens::cli {

void add_histogram_command(CLI::App& app, int& exit_status) {
  auto database_path = std::make_shared<std::string>();
  auto save_path = std::make_shared<std::string>();
  auto allow_missing_ranks = std::make_shared<bool>(false);
  auto* command = app.add_subcommand(
      "histogram",
      "Print (or --save as a CI baseline) the message-size histograms per function and the findings");
  command->add_option("database", *database_path, "commlens.sqlite, or the run's output directory")
      ->required();
  command->add_option("--save", *save_path, "Write them to this baseline file for `commlens check`");
  add_allow_missing_ranks_flag(*command, *allow_missing_ranks);
  set_exit_status_help(*command, "printed or saved");
  command->callback([database_path, save_path, allow_missing_ranks, &exit_status] {
    const auto database = open_for_analysis(*database_path, *allow_missing_ranks);
    const auto json = analysis::baseline_to_json(analysis::baseline_of(database));
    if (save_path->empty()) {
      fmt::print("{}", json);
    } else {
      std::ofstream out(*save_path);
      if (!(out << json))
        throw analysis::AnalysisError(*save_path + ": cannot write baseline");
      fmt::print(stderr, "commlens: baseline saved to {}\n", *save_path);
    }
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
