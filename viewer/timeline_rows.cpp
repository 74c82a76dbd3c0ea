#include "timeline_rows.hpp"

namespace commlens::viewer {

std::vector<int> ranks_of(const analysis::TimelineExtent& extent) {
  std::vector<int> ranks;
  for (const auto& lane : extent.lanes) // lanes are sorted by rank
    if (ranks.empty() || ranks.back() != lane.rank)
      ranks.push_back(lane.rank);
  return ranks;
}

std::vector<TimelineRow> layout_timeline_rows(const analysis::TimelineExtent& extent, bool with_ranges) {
  std::vector<TimelineRow> rows;
  const auto ranks = ranks_of(extent);
  std::size_t lane = 0;
  for (std::size_t rank_index = 0; rank_index < ranks.size(); ++rank_index) {
    const int rank = ranks[rank_index];
    if (with_ranges)
      rows.push_back({TimelineRowKind::Ranges, rank, rank_index});
    for (; lane < extent.lanes.size() && extent.lanes[lane].rank == rank; ++lane)
      rows.push_back({TimelineRowKind::Calls, rank, lane});
    if (extent.has_copies)
      rows.push_back({TimelineRowKind::Copies, rank, rank_index});
  }
  return rows;
}

} // namespace commlens::viewer
