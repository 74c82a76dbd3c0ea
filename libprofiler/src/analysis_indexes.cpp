#include "commlens/profiler/analysis_indexes.hpp"

#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <chrono>

namespace commlens {

AnalysisIndexTimes create_analysis_indexes(SqliteDatabase& merged) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  AnalysisIndexTimes times;
  const auto start = Clock::now();
  merged.exec(schema::kCreateAnalysisIndexes);
  times.index_seconds = seconds_since(start);
  // The tiles read every call once, in id order.
  const auto tiles_start = Clock::now();
  times.tiles = build_timeline_tiles(merged);
  times.tile_seconds = seconds_since(tiles_start);
  return times;
}

} // namespace commlens
