#include "analyse/analysis_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commlens::cli {

void add_allow_missing_ranks_flag(CLI::App& command, bool& allow) {
  command.add_flag("--allow-missing-ranks", allow,
                   "Analyse a merged run even if some ranks' files never arrived (a warning names them)");
}

analysis::Database open_for_analysis(const std::string& path, bool allow_missing_ranks) {
  analysis::Database database(path);
  database.require_events();
  if (!allow_missing_ranks)
    database.require_all_ranks();
  else if (const auto missing = database.missing_ranks(); !missing.empty())
    fmt::print(stderr, "commlens: warning: {}: missing ranks {} of {}; analysing the ranks present\n", path,
               fmt::join(missing, ","), database.world_size());
  return database;
}

} // namespace commlens::cli
