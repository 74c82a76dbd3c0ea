#pragma once
// What the merged database gets for analysis once all its rows are in: the indexes of
// schema::kCreateAnalysisIndexes and the timeline's level-of-detail tiles. The merge and
// bench/report_10m (for its generated databases) both call this, so both files have the same.
#include "commlens/profiler/timeline_tiles.hpp"

namespace commlens {

class SqliteDatabase;

struct AnalysisIndexTimes {
  double index_seconds = 0;
  double tile_seconds = 0;
  TimelineTileSummary tiles;
};

AnalysisIndexTimes create_analysis_indexes(SqliteDatabase& merged);

} // namespace commlens
