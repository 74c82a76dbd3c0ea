#pragma once
// The rows of the timeline, top to bottom: per rank, an annotation row (NVTX ranges and
// MPI_Pcontrol phases) above the rank's call lanes (one per thread), a CUDA copy row beneath them
// and a kernel row beneath that. Annotation, copy and kernel rows appear only when the database has
// something to put in them. Call lanes share the height the fixed-height rows leave.
#include "commlens/analysis/timeline.hpp"

#include <map>
#include <vector>

namespace commlens::viewer {

enum class TimelineRowKind { Ranges, Calls, Copies, Kernels };

struct TimelineRow {
  TimelineRowKind kind = TimelineRowKind::Calls;
  int rank = 0;
  // Calls: index into TimelineExtent::lanes; Ranges, Copies, Kernels: index into ranks_of(extent).
  std::size_t index = 0;
};

// Ranks with traced calls, ascending (the order of the fetcher's per-rank copies and ranges).
std::vector<int> ranks_of(const analysis::TimelineExtent& extent);

// `with_ranges`: give each rank an annotation row (there are NVTX ranges or Pcontrol phases);
// `with_kernels`: a kernel row (cuda_kernels has rows).
std::vector<TimelineRow> layout_timeline_rows(const analysis::TimelineExtent& extent, bool with_ranges,
                                              bool with_kernels = false);

// How the user sized the ranks: folded ones, and the others' share of the height (1 unless set).
struct RankSizing {
  std::vector<int> collapsed;
  std::map<int, double> weights;
  bool is_collapsed(int rank) const;
  double weight(int rank) const;
};

// Heights of the rows in `height` pixels: annotation, copy and kernel rows have fixed heights, call
// lanes share what is left in proportion to their rank's weight (at least kMinimumLaneHeight each).
// The rows of a collapsed rank shrink to one thin strip per lane. Returns each row's top, and the
// bottom of the last row.
inline constexpr int kMinimumLaneHeight = 8, kCollapsedLaneHeight = 6;
std::vector<int> row_tops(const std::vector<TimelineRow>& rows, int top, int height,
                          const RankSizing& sizing);

// The weight that gives `rank`'s call lanes `lanes_height` pixels together in `height` (as for
// row_tops), the other ranks keeping their weights and sharing the rest: dragging the rank's lower
// edge. The height is kept between the lanes' minimum and what leaves the others theirs; without
// other expanded ranks the rank's weight stays as it is.
double weight_for_lanes_height(const std::vector<TimelineRow>& rows, int height, const RankSizing& sizing,
                               int rank, int lanes_height);

} // namespace commlens::viewer
