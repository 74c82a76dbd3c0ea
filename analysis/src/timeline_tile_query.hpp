#pragma once
// The tiled path of query_timeline_window: a window read from the level-of-detail table
// timeline_tiles (docs/timeline-lod.md) instead of from every call in it.
#include "commlens/analysis/timeline.hpp"

#include <atomic>
#include <cstdint>

namespace commlens::analysis {

// Same result shape as the raw path: calls at least `resolution_ns` long on their own, the rest
// in bins that are the tiles of `level` (a quarter of `resolution_ns` wide up to all of it).
TimelineWindow query_tiled_window(const Database& database, const TimelineLane& lane, std::int64_t start_ns,
                                  std::int64_t end_ns, std::int64_t resolution_ns,
                                  const TimelineTileLevel& level, const std::atomic<bool>* cancel);

} // namespace commlens::analysis
