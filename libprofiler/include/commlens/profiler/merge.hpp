#pragma once
// Merges the per-rank files of one run (<dir>/rank-NNNNN.sqlite, in one folder or in one per node)
// into one database on rank 0's clock, in one process: `commlens merge DIR...` afterwards, and
// rank 0 at MPI_Finalize for a run of several jobs (a job alone merges as a tree:
// merge_parts.hpp). The database is written as <output>.partial and renamed to <output> once
// complete.
#include "commlens/profiler/merge_error.hpp"
#include "commlens/profiler/merge_options.hpp"
#include "commlens/profiler/rank_file.hpp"

#include <string>
#include <vector>

namespace commlens {

// Throws MergeError naming the directory or file and the problem.
MergeResult merge_rank_databases(const MergeOptions& options);

// One line saying what the merged database lacks (missing ranks, dropped trace events, calls not
// counted), for the end-of-run and merge messages; empty when nothing was lost.
std::string describe_losses(const MergeResult& result);

// Ranks as ranges, for messages about thousands of them: {0, 1, 2, 3, 8} -> "0-3,8".
std::string describe_ranks(std::vector<int> ranks);

} // namespace commlens
