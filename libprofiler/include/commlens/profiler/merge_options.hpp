#pragma once
// What a merge is asked to do and what it reports (merge.hpp, merge_parts.hpp): plain values, so
// that the merge's parts share them without including the merges themselves.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace commlens {

// Ranks whose files did not reach a merge, and where they stay ("host:/folder").
struct RanksLeftBehind {
  std::vector<int> ranks;
  std::string place;
};

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
  // Of missing_ranks, those whose files are known to stay elsewhere (a folder that rank 0 cannot
  // see and whose files could not be sent to it: merge_parts.hpp).
  std::vector<RanksLeftBehind> left_behind;
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
  // More folders holding rank files of the same run (one per node, where the nodes share no
  // folder); the registries of all of them count the run's processes.
  std::vector<std::string> more_directories = {};
};

} // namespace commlens
