#include "commlens/profiler/timeline_tiles.hpp"

#include "commlens/profiler/call_lanes.hpp"
#include "commlens/profiler/dominant_function.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/sqlite_lane_probe.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace commlens {
namespace {

// Documented in docs/schema.md. Dropped first so that building again (a re-merge into the same
// file) starts from nothing.
constexpr std::string_view kCreateTileTables = R"sql(
DROP TABLE IF EXISTS timeline_tiles;
DROP TABLE IF EXISTS timeline_tile_levels;
CREATE TABLE timeline_tile_levels (
  level   INTEGER PRIMARY KEY,         -- 0: the finest
  tile_ns INTEGER NOT NULL             -- tile t of the level covers [t * tile_ns, (t + 1) * tile_ns)
);
CREATE TABLE timeline_tiles (
  rank                 INTEGER NOT NULL,
  thread               INTEGER NOT NULL,
  level                INTEGER NOT NULL,
  tile                 INTEGER NOT NULL,
  calls                INTEGER NOT NULL, -- calls that start in the tile
  busy_ns              INTEGER NOT NULL, -- time of the tile inside calls (a call is split over its tiles)
  dominant_function_id INTEGER NOT NULL, -- the function with the most busy time in the tile
  longest_call_id      INTEGER,          -- the longest call that starts in the tile; NULL if none does
  longest_call_ns      INTEGER NOT NULL, -- its duration; 0 if none
  PRIMARY KEY (rank, thread, level, tile)
) WITHOUT ROWID;
)sql";

// Calls come in start order per lane, so a tile is written once. A call nested in a longer one
// (an MPI call made from inside another) sends the scan back to a tile already written: the rows
// are then combined, keeping counts and busy time exact.
constexpr std::string_view kInsertTile = R"sql(
INSERT INTO timeline_tiles VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (rank, thread, level, tile) DO UPDATE SET
  calls = calls + excluded.calls,
  busy_ns = busy_ns + excluded.busy_ns,
  dominant_function_id = CASE WHEN excluded.busy_ns > busy_ns THEN excluded.dominant_function_id
                              ELSE dominant_function_id END,
  longest_call_id = CASE WHEN longest_call_id IS NULL OR excluded.longest_call_ns > longest_call_ns
                         THEN coalesce(excluded.longest_call_id, longest_call_id) ELSE longest_call_id END,
  longest_call_ns = max(longest_call_ns, excluded.longest_call_ns)
)sql";

struct Call {
  std::int64_t id, start_ns, end_ns;
  int function_id;
};

struct Lane {
  std::int64_t rank, thread;
  bool operator==(const Lane&) const = default;
};

// Tile widths from the density of calls: the finest level holds kMinMeanCallsPerFinestTile calls
// per tile on average, the coarsest covers the longest rank in one or two tiles. Spans come from
// a few rowid seeks per lane (call_lanes.hpp).
std::vector<std::int64_t> choose_tile_widths(SqliteDatabase& merged) {
  const auto calls = merged.query_int64("SELECT count(*) FROM mpi_calls");
  if (calls == 0)
    return {};
  auto ranks = merged.prepare("SELECT rank FROM ranks");
  call_lanes::SqliteLaneProbe probe(merged);
  std::int64_t total_span = 0, longest_span = 0;
  while (ranks.step()) {
    if (const auto rank_span = call_lanes::rank_span(probe, ranks.column_int64(0))) {
      const auto span = std::max<std::int64_t>(rank_span->end_ns - rank_span->start_ns, 0);
      total_span += span;
      longest_span = std::max(longest_span, span);
    }
  }
  // In floating point: thousands of ranks running for a day overflow the product in 64 bits.
  const double finest = static_cast<double>(kMinMeanCallsPerFinestTile) * static_cast<double>(total_span) /
                        static_cast<double>(calls);
  constexpr auto kWidest = std::numeric_limits<std::int64_t>::max() / kTileWidthFactor;
  std::int64_t width = 1;
  while (static_cast<double>(width) < finest && width < kWidest)
    width *= kTileWidthFactor;
  std::vector<std::int64_t> widths{width};
  while (width < longest_span && width < kWidest) {
    width *= kTileWidthFactor;
    widths.push_back(width);
  }
  return widths;
}

// One row of timeline_tiles, without its lane and level.
struct Tile {
  std::int64_t index = 0, calls = 0, busy_ns = 0;
  int dominant_function_id = 0;
  std::int64_t longest_call_id = 0, longest_call_ns = 0; // the id is meaningful only when calls > 0
};

// Writes tile rows for the lane being scanned.
class TileWriter {
public:
  explicit TileWriter(SqliteDatabase& merged) : insert_(merged.prepare(kInsertTile)) {}
  void set_lane(const Lane& lane) { lane_ = lane; }
  void write(int level, const Tile& tile) {
    insert_.bind(1, lane_.rank).bind(2, lane_.thread).bind(3, std::int64_t{level}).bind(4, tile.index);
    insert_.bind(5, tile.calls).bind(6, tile.busy_ns);
    insert_.bind(7, std::int64_t{tile.dominant_function_id});
    if (tile.calls > 0)
      insert_.bind(8, tile.longest_call_id);
    else
      insert_.bind_null(8);
    insert_.bind(9, tile.longest_call_ns).run();
    ++rows_;
  }
  std::int64_t rows() const { return rows_; }

private:
  SqliteStatement insert_;
  Lane lane_{};
  std::int64_t rows_ = 0;
};

// The open tile of one level on the lane being scanned.
class LevelTiles {
public:
  LevelTiles(int level, std::int64_t width_ns) : level_(level), width_ns_(width_ns) {}

  void add(const Call& call, TileWriter& out) {
    const auto first = tile_index(call.start_ns, width_ns_);
    const auto last = call.end_ns > call.start_ns ? tile_index(call.end_ns - 1, width_ns_) : first;
    for (auto index = first; index <= last; ++index) {
      move_to(index, out);
      const auto covered =
          std::min(call.end_ns, (index + 1) * width_ns_) - std::max(call.start_ns, index * width_ns_);
      tile_.busy_ns += covered;
      const bool starts_here = index == first;
      votes_.add(call.function_id, covered + (starts_here ? 1 : 0));
      if (!starts_here)
        continue;
      ++tile_.calls;
      const auto duration = call.end_ns - call.start_ns;
      if (tile_.calls == 1 || duration > tile_.longest_call_ns) {
        tile_.longest_call_ns = duration;
        tile_.longest_call_id = call.id;
      }
    }
  }

  void flush(TileWriter& out) {
    if (!open_)
      return;
    tile_.dominant_function_id = votes_.take();
    out.write(level_, tile_);
    open_ = false;
  }

private:
  void move_to(std::int64_t index, TileWriter& out) {
    if (open_ && index == tile_.index)
      return;
    flush(out);
    open_ = true;
    tile_ = {.index = index};
  }

  int level_;
  std::int64_t width_ns_;
  bool open_ = false;
  Tile tile_;
  DominantFunction votes_;
};

} // namespace

TimelineTileSummary build_timeline_tiles(SqliteDatabase& merged) {
  merged.exec(kCreateTileTables);
  const auto widths = choose_tile_widths(merged);
  auto level_row = merged.prepare("INSERT INTO timeline_tile_levels VALUES (?1, ?2)");
  std::vector<LevelTiles> levels;
  for (const auto width : widths) {
    const auto level = static_cast<int>(levels.size());
    level_row.bind(1, std::int64_t{level}).bind(2, width).run();
    levels.emplace_back(level, width);
  }
  if (levels.empty())
    return {};
  // A savepoint works both inside the caller's transaction and as one of its own: without it,
  // every row would be committed on its own.
  merged.exec("SAVEPOINT timeline_tiles");

  // Call ids are rank << 46 | thread << 36 | sequence: rowid order is lane by lane, each lane in
  // call order, and walks the table in storage order.
  TileWriter out(merged);
  auto calls =
      merged.prepare("SELECT id, rank, thread, function_id, start_ns, end_ns FROM mpi_calls ORDER BY id");
  std::optional<Lane> lane;
  while (calls.step()) {
    const Lane row_lane{calls.column_int64(1), calls.column_int64(2)};
    if (lane != row_lane) {
      for (auto& level : levels)
        level.flush(out);
      lane = row_lane;
      out.set_lane(row_lane);
    }
    const Call call{calls.column_int64(0), calls.column_int64(4), calls.column_int64(5),
                    static_cast<int>(calls.column_int64(3))};
    for (auto& level : levels)
      level.add(call, out);
  }
  for (auto& level : levels)
    level.flush(out);
  merged.exec("RELEASE timeline_tiles");
  return {static_cast<int>(levels.size()), out.rows()};
}

} // namespace commlens
