#pragma once
// The probe call_lanes.hpp's searches take, over libprofiler's own SQLite handles: the oldest or
// newest call of an id range, one rowid seek each (the analysis layer has its own over its
// Statement type).
#include "commlens/profiler/call_lanes.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <cstdint>
#include <optional>

namespace commlens::call_lanes {

class SqliteLaneProbe {
public:
  explicit SqliteLaneProbe(SqliteDatabase& database)
      : oldest_(database.prepare(kProbeOldestSql)), newest_(database.prepare(kProbeNewestSql)) {}

  std::optional<LaneCall> operator()(std::int64_t from, std::int64_t to, bool newest_first) {
    SqliteStatement& query = newest_first ? newest_ : oldest_;
    query.reset();
    query.bind(1, from).bind(2, to);
    return query.step()
               ? std::optional(LaneCall{query.column_int64(0), query.column_int64(1), query.column_int64(2)})
               : std::nullopt;
  }

private:
  SqliteStatement oldest_;
  SqliteStatement newest_;
};

} // namespace commlens::call_lanes
