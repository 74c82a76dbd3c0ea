#include "timeline_rows.hpp"

#include <algorithm>

namespace commlens::viewer {

std::vector<int> ranks_of(const analysis::TimelineExtent& extent) {
  std::vector<int> ranks;
  for (const auto& lane : extent.lanes) // lanes are sorted by rank
    if (ranks.empty() || ranks.back() != lane.rank)
      ranks.push_back(lane.rank);
  return ranks;
}

std::vector<TimelineRow> layout_timeline_rows(const analysis::TimelineExtent& extent, bool with_ranges,
                                              const std::vector<analysis::GpuStream>& streams,
                                              bool with_synchronizations,
                                              const std::vector<analysis::CudaApiThread>& api_threads) {
  std::vector<TimelineRow> rows;
  const auto ranks = ranks_of(extent);
  std::size_t lane = 0;
  for (std::size_t rank_index = 0; rank_index < ranks.size(); ++rank_index) {
    const int rank = ranks[rank_index];
    if (with_ranges)
      rows.push_back({TimelineRowKind::Ranges, rank, rank_index});
    for (; lane < extent.lanes.size() && extent.lanes[lane].rank == rank; ++lane)
      rows.push_back({TimelineRowKind::Calls, rank, lane});
    for (std::size_t thread = 0; thread < api_threads.size(); ++thread)
      if (api_threads[thread].rank == rank)
        rows.push_back({TimelineRowKind::CudaApi, rank, thread});
    if (with_synchronizations)
      rows.push_back({TimelineRowKind::Synchronizations, rank, rank_index});
    for (std::size_t stream = 0; stream < streams.size(); ++stream)
      if (streams[stream].rank == rank)
        rows.push_back({TimelineRowKind::Stream, rank, stream});
  }
  return rows;
}

namespace {

int fixed_height(TimelineRowKind kind) {
  switch (kind) {
  case TimelineRowKind::Ranges:
    return 38; // three nesting levels of NVTX ranges, each tall enough for its name
  case TimelineRowKind::CudaApi:
    return 22; // two nesting levels: a runtime call above the driver calls it made
  case TimelineRowKind::Synchronizations:
    return 10;
  case TimelineRowKind::Stream:
    return 16;
  case TimelineRowKind::Calls:
    return 0;
  }
  return 0;
}

} // namespace

bool RankSizing::is_collapsed(int rank) const {
  return std::find(collapsed.begin(), collapsed.end(), rank) != collapsed.end();
}

double RankSizing::weight(int rank) const {
  const auto found = weights.find(rank);
  return found == weights.end() ? 1.0 : found->second;
}

namespace {

int height_of_fixed(const TimelineRow& row, const RankSizing& sizing) {
  if (sizing.is_collapsed(row.rank))
    return row.kind == TimelineRowKind::Calls ? kCollapsedLaneHeight : 0;
  return fixed_height(row.kind);
}

bool shares_height(const TimelineRow& row, const RankSizing& sizing) {
  return row.kind == TimelineRowKind::Calls && !sizing.is_collapsed(row.rank);
}

// What the fixed-height rows take, and the weights of the lanes that share the rest.
struct HeightBudget {
  int fixed = 0;
  double weights = 0;
  int lanes = 0;
};

HeightBudget height_budget(const std::vector<TimelineRow>& rows, const RankSizing& sizing) {
  HeightBudget budget;
  for (const auto& row : rows) {
    if (shares_height(row, sizing)) {
      budget.weights += sizing.weight(row.rank);
      ++budget.lanes;
    } else {
      budget.fixed += height_of_fixed(row, sizing);
    }
  }
  return budget;
}

} // namespace

int comfortable_height(const std::vector<TimelineRow>& rows, const RankSizing& sizing) {
  const auto budget = height_budget(rows, sizing);
  return budget.fixed + budget.lanes * kComfortableLaneHeight;
}

std::vector<int> row_tops(const std::vector<TimelineRow>& rows, int top, int height,
                          const RankSizing& sizing) {
  const auto budget = height_budget(rows, sizing);
  const double per_weight = budget.weights > 0 ? std::max(0, height - budget.fixed) / budget.weights : 0;
  std::vector<int> tops;
  tops.reserve(rows.size() + 1);
  int y = top;
  for (const auto& row : rows) {
    tops.push_back(y);
    if (shares_height(row, sizing))
      y += std::max(kMinimumLaneHeight, static_cast<int>(per_weight * sizing.weight(row.rank)));
    else
      y += height_of_fixed(row, sizing);
  }
  tops.push_back(y);
  return tops;
}

double weight_for_lanes_height(const std::vector<TimelineRow>& rows, int height, const RankSizing& sizing,
                               int rank, int lanes_height) {
  const auto budget = height_budget(rows, sizing);
  int own_lanes = 0, other_lanes = 0;
  double others = 0; // the other ranks' weights
  for (const auto& row : rows)
    if (shares_height(row, sizing)) {
      (row.rank == rank ? own_lanes : other_lanes) += 1;
      if (row.rank != rank)
        others += sizing.weight(row.rank);
    }
  const int shared = std::max(0, height - budget.fixed);
  if (own_lanes == 0 || others <= 0)
    return sizing.weight(rank);
  // own / (own + others) of the shared height goes to the rank: solve for its weight.
  const int target =
      std::clamp(lanes_height, own_lanes * kMinimumLaneHeight,
                 std::max(own_lanes * kMinimumLaneHeight, shared - other_lanes * kMinimumLaneHeight));
  if (target >= shared)
    return sizing.weight(rank);
  return static_cast<double>(target) * others / (static_cast<double>(own_lanes) * (shared - target));
}

} // namespace commlens::viewer
