#pragma once
// Merges the per-rank files of one run (<dir>/rank-NNNNN.sqlite) into one database on rank 0's
// clock. Used by rank 0 at MPI_Finalize and by `commlens merge DIR` afterwards. The database is
// written as <output>.partial and renamed to <output> once complete.
#include "commlens/profiler/merge_error.hpp"
#include "commlens/profiler/rank_file.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace commlens {

struct MergeResult {
  std::string output_path;
  int world_size = 0; // processes of the run: every job's MPI_COMM_WORLD (job_registry.hpp)
  int jobs = 1;       // the job mpirun started and those it spawned
  std::vector<int> merged_ranks;
  std::vector<int> missing_ranks; // ranks of the run with no readable file
  // Ranks that never finalized, on another host than rank 0: no clock offset was measured for them
  // (run table 'unaligned_ranks'; the merge prints a warning).
  std::vector<int> unaligned_ranks;
  std::uint64_t calls = 0; // rows in mpi_calls
  // Losses the ranks recorded (ranks.dropped_events, ranks.summary_overflow), summed.
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
  bool rank_files_removed = false;
  // Where the merge's time went: reading the rank files' chunk counts and each lane's first and
  // last chunks for a bound on the calls and their spans (the timeline tiles' widths), then copying the rank
  // files' tables and turning their chunks into rows and timeline tiles.
  double plan_seconds = 0;
  double rows_seconds = 0;
  // Whether the call and request rows went in as b-tree pages (MergeOptions::write_pages), not by
  // INSERTs.
  bool rows_as_pages = false;
  // Ranks whose trace rows and timeline tiles went in as the pages they encoded themselves at
  // MPI_Finalize (trace_pages.hpp; run table 'trace_pages_ranks'); the others' chunks were decoded.
  std::vector<int> trace_pages_ranks;
};

struct MergeOptions {
  std::string directory;
  std::string output_path; // default: <directory>/commlens.sqlite
  // Called after each rank file: (ranks done, ranks total).
  std::function<void(int, int)> progress;
  // Delete the rank files once every rank of the run is in the merged database (they stay when
  // one is missing or unreadable: they are then all there is of it).
  bool remove_rank_files = false;
  // Write the trace's call and request rows as b-tree pages (sqlite_bulk_table.hpp) where the
  // merged file allows it; false: by INSERT statements only.
  bool write_pages = true;
  // Copy the pages ranks encoded at MPI_Finalize where they are still valid; false: decode every
  // rank's chunks (the same database either way).
  bool use_rank_pages = true;
};

// Throws MergeError naming the directory or file and the problem.
MergeResult merge_rank_databases(const MergeOptions& options);

// One line saying what the merged database lacks (missing ranks, dropped trace events, calls not
// counted), for the end-of-run and merge messages; empty when nothing was lost.
std::string describe_losses(const MergeResult& result);

} // namespace commlens
