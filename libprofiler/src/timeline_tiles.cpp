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
    // Most calls lie inside the open tile: no division.
    if (open_ && call.start_ns >= begin_ns_ && call.start_ns < end_ns_ && call.end_ns <= end_ns_) {
      add_part(call, call.end_ns - call.start_ns, true);
      return;
    }
    const auto first = tile_index(call.start_ns, width_ns_);
    const auto last = call.end_ns > call.start_ns ? tile_index(call.end_ns - 1, width_ns_) : first;
    for (auto index = first; index <= last; ++index) {
      move_to(index, out);
      add_part(call, std::min(call.end_ns, end_ns_) - std::max(call.start_ns, begin_ns_), index == first);
    }
  }

  void discard() {
    open_ = false;
    votes_.take();
  }

  void flush(TileWriter& out) {
    if (!open_)
      return;
    tile_.dominant_function_id = votes_.take();
    out.write(level_, tile_);
    open_ = false;
  }

private:
  // `covered`: the call's time inside the open tile.
  void add_part(const Call& call, std::int64_t covered, bool starts_here) {
    tile_.busy_ns += covered;
    votes_.add(call.function_id, covered + (starts_here ? 1 : 0));
    if (!starts_here)
      return;
    ++tile_.calls;
    const auto duration = call.end_ns - call.start_ns;
    if (tile_.calls == 1 || duration > tile_.longest_call_ns) {
      tile_.longest_call_ns = duration;
      tile_.longest_call_id = call.id;
    }
  }

  void move_to(std::int64_t index, TileWriter& out) {
    if (open_ && index == tile_.index)
      return;
    flush(out);
    open_ = true;
    tile_ = {.index = index};
    begin_ns_ = index * width_ns_;
    end_ns_ = (index + 1) * width_ns_;
  }

  int level_;
  std::int64_t width_ns_;
  bool open_ = false;
  std::int64_t begin_ns_ = 0, end_ns_ = 0; // the open tile's span
  Tile tile_;
  DominantFunction votes_;
};

} // namespace

void TileSpanTotals::add(const TileSpan& span) {
  const auto length = std::max<std::int64_t>(span.end_ns - span.start_ns, 0);
  total_ns += length;
  longest_ns = std::max(longest_ns, length);
}

std::vector<std::int64_t> choose_tile_widths(std::int64_t calls, const TileSpanTotals& spans) {
  if (calls == 0)
    return {};
  const std::int64_t total_span = spans.total_ns, longest_span = spans.longest_ns;
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

struct TimelineTileBuilder::State {
  explicit State(SqliteDatabase& db) : out(db) {}
  TileWriter out;
  std::vector<LevelTiles> levels;
  std::optional<Lane> lane;
};

TimelineTileBuilder::TimelineTileBuilder(SqliteDatabase& db, const std::vector<std::int64_t>& widths) {
  db.exec(kCreateTileTables);
  state_ = std::make_unique<State>(db);
  auto level_row = db.prepare("INSERT INTO timeline_tile_levels VALUES (?1, ?2)");
  for (const auto width : widths) {
    const auto level = static_cast<int>(state_->levels.size());
    level_row.bind(1, std::int64_t{level}).bind(2, width).run();
    state_->levels.emplace_back(level, width);
  }
}

TimelineTileBuilder::~TimelineTileBuilder() = default;

void TimelineTileBuilder::add_call(std::int64_t id, int function_id, std::int64_t start_ns,
                                   std::int64_t end_ns) {
  // Call ids are rank << 46 | thread << 36 | sequence: a lane's calls come together, in call order.
  const Lane lane{id >> call_lanes::kRankShift, call_lanes::thread_of(id)};
  if (state_->lane != lane) {
    flush();
    state_->lane = lane;
    state_->out.set_lane(lane);
  }
  const Call call{id, start_ns, end_ns, function_id};
  for (auto& level : state_->levels)
    level.add(call, state_->out);
}

void TimelineTileBuilder::flush() {
  for (auto& level : state_->levels)
    level.flush(state_->out);
}

void TimelineTileBuilder::discard() {
  for (auto& level : state_->levels)
    level.discard();
  state_->lane.reset();
}

TimelineTileSummary TimelineTileBuilder::summary() const {
  return {static_cast<int>(state_->levels.size()), state_->out.rows()};
}

TimelineTileSummary build_timeline_tiles(SqliteDatabase& merged) {
  TileSpanTotals spans;
  {
    auto ranks = merged.prepare("SELECT rank FROM ranks");
    call_lanes::SqliteLaneProbe probe(merged);
    while (ranks.step()) {
      if (const auto span = call_lanes::rank_span(probe, ranks.column_int64(0)))
        spans.add({span->start_ns, span->end_ns});
    }
  }
  TimelineTileBuilder tiles(merged,
                            choose_tile_widths(merged.query_int64("SELECT count(*) FROM mpi_calls"), spans));
  // A savepoint works both inside the caller's transaction and as one of its own: without it,
  // every row would be committed on its own.
  merged.exec("SAVEPOINT timeline_tiles");
  // Rowid order is lane by lane, each lane in call order, and walks the table in storage order.
  auto calls = merged.prepare("SELECT id, function_id, start_ns, end_ns FROM mpi_calls ORDER BY id");
  while (calls.step())
    tiles.add_call(calls.column_int64(0), static_cast<int>(calls.column_int64(1)), calls.column_int64(2),
                   calls.column_int64(3));
  tiles.flush();
  merged.exec("RELEASE timeline_tiles");
  return tiles.summary();
}

} // namespace commlens
