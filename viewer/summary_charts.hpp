#pragma once
// The summary's pictures as bar data: time in MPI per rank split by its busiest functions, the
// functions with the most time, and the bytes each CUDA copy path moved.
#include "bar_chart.hpp"
#include "loaded_database.hpp"

namespace commlens::viewer {

// The `kept` functions with the most time over the run, most first.
QStringList busiest_function_names(const LoadedDatabase& database, int kept);
// One bar of `group`'s entries in `times`, each divided by `divisor`: a segment per function in
// `named`, the rest folded into one "other MPI" segment.
Bar function_split_bar(QString label, const std::vector<analysis::GroupFunctionTime>& times, int group,
                       const QStringList& named, double divisor);

// Functions beyond the `kept` busiest of the run are folded into one "other" segment per rank.
std::vector<Bar> rank_time_bars(const LoadedDatabase& database, int kept = 6);
std::vector<Bar> top_function_bars(const LoadedDatabase& database, int shown = 10);
std::vector<Bar> copy_path_bars(const LoadedDatabase& database);

} // namespace commlens::viewer
