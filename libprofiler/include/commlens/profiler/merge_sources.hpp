#pragma once
// What one step of a job's merge tree takes and gives (merge_parts.hpp): plain values, shared with
// the step's input (tree_merge_input.hpp) without including the tree's merge itself.
#include "commlens/profiler/merge_options.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens {

// What a job's ranks agree on at MPI_Finalize, so that every part fits the merged file.
struct JobTimeline {
  std::int64_t origin_ns = 0;            // rank 0's MPI_Init on its own clock
  std::vector<std::int64_t> tile_widths; // of the job's trace (empty: no trace)
};

// A part handed to a merge, and every rank it covers with the place its files stay: all of them
// are left behind when the part cannot be read.
struct PartSource {
  std::string path;
  std::vector<RanksLeftBehind> ranks;
};

struct MergeSources {
  std::string directory;                    // of the rank files
  std::vector<int> ranks;                   // their run ranks (rank-NNNNN.sqlite in directory)
  std::string place;                        // "host:/folder" of the rank files, for messages
  std::vector<PartSource> parts;            // parts received from other leaders
  std::vector<RanksLeftBehind> left_behind; // ranks of parts that never arrived
};

struct PartContents {
  std::vector<int> ranks;                   // merged into the part
  std::vector<RanksLeftBehind> left_behind; // not merged, and where their files stay
};

} // namespace commlens
