#include "analyse/analysis_input.hpp"

#include "commlens/analysis/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commlens::cli {
namespace {

namespace fs = std::filesystem;

bool holds_rank_files(const fs::path& directory) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("rank-") && name.ends_with(".sqlite"))
      return true;
  }
  return false;
}

// A run's output directory stands for the merged database `commlens run` left in it.
fs::path database_in(const std::string& path) {
  std::error_code error;
  if (!fs::is_directory(path, error))
    return path;
  const auto merged = fs::path(path) / "commlens.sqlite";
  if (fs::exists(merged, error))
    return merged;
  throw analysis::DatabaseError(
      path, holds_rank_files(path) ? fmt::format("is a directory, not a database file: it holds rank "
                                                 "files but no commlens.sqlite (commlens merge {})",
                                                 path)
                                   : "is a directory, not a database file, and holds no commlens.sqlite");
}

} // namespace

void add_allow_missing_ranks_flag(CLI::App& command, bool& allow) {
  command.add_flag("--allow-missing-ranks", allow,
                   "Analyse a merged run even if some ranks' files never arrived (a warning names them)");
}

analysis::Database open_for_analysis(const std::string& path, bool allow_missing_ranks) {
  analysis::Database database(database_in(path));
  database.require_events();
  if (!allow_missing_ranks)
    database.require_all_ranks();
  else if (const auto missing = database.missing_ranks(); !missing.empty())
    fmt::print(stderr, "commlens: warning: {}: missing ranks {} of {}; analysing the ranks present\n",
               database.path().string(), fmt::join(missing, ","), database.world_size());
  return database;
}

} // namespace commlens::cli
