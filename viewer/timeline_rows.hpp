#pragma once
// The rows of the timeline, top to bottom: per rank, an annotation row (NVTX ranges and phases)
// above the rank's call lanes (one per thread), a CUDA API row per thread that made CUDA API calls
// (cuda_api_calls.hpp), a row of the host's CUDA synchronisation calls beneath them, and one lane
// per CUDA stream of the rank's GPU (kernels, copies, memsets and the NCCL calls' time on the GPU,
// gpu_streams.hpp). Annotation, API, synchronisation and stream rows appear only when the database
// has something to put in them. Call lanes share the height the fixed-height rows leave.
#include "commlens/analysis/cuda_api_calls.hpp"
#include "commlens/analysis/gpu_streams.hpp"
#include "commlens/analysis/timeline.hpp"

#include <map>
#include <vector>

namespace commlens::viewer {

enum class TimelineRowKind { Ranges, Calls, CudaApi, Synchronizations, Stream };

struct TimelineRow {
  TimelineRowKind kind = TimelineRowKind::Calls;
  int rank = 0;
  // Calls: index into TimelineExtent::lanes; Ranges, Synchronizations: index into ranks_of(extent);
  // CudaApi: index into the CUDA API threads; Stream: index into the GPU streams.
  std::size_t index = 0;
};

// Ranks with traced calls, ascending (the order of the fetcher's per-rank ranges and waits).
std::vector<int> ranks_of(const analysis::TimelineExtent& extent);

// `with_ranges`: give each rank an annotation row (there are NVTX ranges or phases);
// `with_synchronizations`: a row of CUDA synchronisation calls; `streams`: a lane per stream;
// `api_threads`: a CUDA API row per thread.
std::vector<TimelineRow> layout_timeline_rows(const analysis::TimelineExtent& extent, bool with_ranges,
                                              const std::vector<analysis::GpuStream>& streams = {},
                                              bool with_synchronizations = false,
                                              const std::vector<analysis::CudaApiThread>& api_threads = {});

// How the user sized the ranks: folded ones, and the others' share of the height (1 unless set).
struct RankSizing {
  std::vector<int> collapsed;
  std::map<int, double> weights;
  bool is_collapsed(int rank) const;
  double weight(int rank) const;
};

// Heights of the rows in `height` pixels: annotation, API, synchronisation and stream rows have fixed
// heights, call lanes share what is left in proportion to their rank's weight (at least
// kMinimumLaneHeight each).
// The rows of a collapsed rank shrink to one thin strip per lane. Returns each row's top, and the
// bottom of the last row.
inline constexpr int kMinimumLaneHeight = 8, kCollapsedLaneHeight = 6, kComfortableLaneHeight = 24;
// The height at which every row is readable: the fixed rows, and each call lane of an expanded
// rank kComfortableLaneHeight high. The canvas grows to it, in a scroll area, when the window is lower.
int comfortable_height(const std::vector<TimelineRow>& rows, const RankSizing& sizing);
std::vector<int> row_tops(const std::vector<TimelineRow>& rows, int top, int height,
                          const RankSizing& sizing);

// The weight that gives `rank`'s call lanes `lanes_height` pixels together in `height` (as for
// row_tops), the other ranks keeping their weights and sharing the rest: dragging the rank's lower
// edge. The height is kept between the lanes' minimum and what leaves the others theirs; without
// other expanded ranks the rank's weight stays as it is.
double weight_for_lanes_height(const std::vector<TimelineRow>& rows, int height, const RankSizing& sizing,
                               int rank, int lanes_height);

} // namespace commlens::viewer
