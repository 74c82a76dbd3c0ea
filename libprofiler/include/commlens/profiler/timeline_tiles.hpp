#pragma once
// The timeline's level-of-detail table (docs/timeline-lod.md, docs/schema.md): for every lane
// (rank, thread) and level, fixed-width time tiles holding how many calls start in them and how
// much of them calls cover. A viewer window much wider than a call reads a few rows per pixel
// from it instead of every call, so the whole trace opens at a cost independent of its size.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace commlens {

class SqliteDatabase;

// Each level's tiles are this many times as wide as the previous level's: a window maps to a
// level whose tiles are between a quarter of a pixel and one pixel wide.
inline constexpr std::int64_t kTileWidthFactor = 4;
// The finest level is the narrowest power of kTileWidthFactor whose tiles hold at least this many
// calls on average; finer tiles would save the viewer little over reading the calls themselves.
inline constexpr std::int64_t kMinMeanCallsPerFinestTile = 16;

// The tile of width `tile_ns` holding `time_ns`: tile t covers [t * tile_ns, (t + 1) * tile_ns),
// also before time 0 (a rank's calls can start there once its clock is corrected).
constexpr std::int64_t tile_index(std::int64_t time_ns, std::int64_t tile_ns) {
  const auto quotient = time_ns / tile_ns;
  return time_ns % tile_ns != 0 && time_ns < 0 ? quotient - 1 : quotient;
}

struct TimelineTileSummary {
  int levels = 0;
  std::int64_t tiles = 0; // rows written
};

// Where a rank's calls begin (the earliest start) and end (the end of the call that starts last),
// as call_lanes::rank_span finds them in a merged file.
struct TileSpan {
  std::int64_t start_ns = 0, end_ns = 0;
};

// What the tile widths are chosen from, per rank: a bound on its calls and its span (none without
// calls). The merge plan reads it from a rank's chunks; a rank encoding its own pages, likewise.
struct TraceExtent {
  std::int64_t calls_at_most = 0;
  std::optional<TileSpan> span;
};

// What the tile widths depend on of the ranks' spans: their sum and the longest. Sums, so that the
// ranks of a job add theirs up with one reduction and the merge keeps no span per rank.
struct TileSpanTotals {
  std::int64_t total_ns = 0, longest_ns = 0;
  void add(const TileSpan& span);
};

// Tile widths from the density of calls: the finest level holds kMinMeanCallsPerFinestTile calls
// per tile on average over the ranks' spans, the coarsest covers the longest rank in one or two
// tiles. Empty when there are no calls.
std::vector<std::int64_t> choose_tile_widths(std::int64_t calls, const TileSpanTotals& spans);

// Writes the tiles of calls fed to it lane by lane, each lane's calls in call-id order (the order
// the merge inserts them in), so the tiles need no pass of their own over the calls. Creating it
// (re)creates timeline_tile_levels and timeline_tiles and writes the levels.
class TimelineTileBuilder {
public:
  TimelineTileBuilder(SqliteDatabase& db, const std::vector<std::int64_t>& widths);
  ~TimelineTileBuilder();
  TimelineTileBuilder(const TimelineTileBuilder&) = delete;
  TimelineTileBuilder& operator=(const TimelineTileBuilder&) = delete;

  void add_call(std::int64_t id, int function_id, std::int64_t start_ns, std::int64_t end_ns);
  // Writes the tiles still open; call before committing the calls of a lane.
  void flush();
  // Forgets the tiles still open (their calls were rolled back).
  void discard();
  TimelineTileSummary summary() const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

// (Re)creates timeline_tile_levels and timeline_tiles from mpi_calls in one pass in call-id order,
// for files whose calls are already in. Finds the lanes and their spans by rowid seeks
// (call_lanes.hpp): no index needed.
TimelineTileSummary build_timeline_tiles(SqliteDatabase& merged);

} // namespace commlens
