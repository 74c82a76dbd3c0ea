#pragma once
// The rows of the timeline, top to bottom: per rank, an annotation row (NVTX ranges and
// MPI_Pcontrol phases) above the rank's call lanes (one per thread) and a CUDA copy row beneath
// them. Annotation and copy rows appear only when the database has something to put in them.
#include "commlens/analysis/timeline.hpp"

#include <vector>

namespace commlens::viewer {

enum class TimelineRowKind { Ranges, Calls, Copies };

struct TimelineRow {
  TimelineRowKind kind = TimelineRowKind::Calls;
  int rank = 0;
  // Calls: index into TimelineExtent::lanes; Ranges and Copies: index into ranks_of(extent).
  std::size_t index = 0;
};

// Ranks with traced calls, ascending (the order of the fetcher's per-rank copies and ranges).
std::vector<int> ranks_of(const analysis::TimelineExtent& extent);

// `with_ranges`: give each rank an annotation row (there are NVTX ranges or Pcontrol phases).
std::vector<TimelineRow> layout_timeline_rows(const analysis::TimelineExtent& extent, bool with_ranges);

} // namespace commlens::viewer
