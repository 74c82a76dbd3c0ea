#pragma once
// How every analysing subcommand (report, histogram, check, compare, export) opens its database, so
// they refuse the same inputs with the same messages.
#include "commlens/analysis/database.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace commlens::cli {

// Adds --allow-missing-ranks to `command`, setting `allow`.
void add_allow_missing_ranks_flag(CLI::App& command, bool& allow);

// Opens `path`, or the commlens.sqlite in it when it is a run's output directory (DatabaseError for
// a bad file), refuses a run without MPI calls, and refuses a merged run whose rank files did not
// all arrive unless `allow_missing_ranks`; then it names the missing ranks in a one-line warning on
// stderr and goes on with the present ones.
analysis::Database open_for_analysis(const std::string& path, bool allow_missing_ranks);

} // namespace commlens::cli
