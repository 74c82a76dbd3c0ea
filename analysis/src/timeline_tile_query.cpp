#include "timeline_tile_query.hpp"

#include "timeline_bins.hpp"
#include "timeline_call_rows.hpp"

#include "commlens/profiler/timeline_tiles.hpp"

#include <algorithm>
#include <optional>

namespace commlens::analysis {
namespace {

// Tiles read between two looks at the cancel flag.
constexpr std::uint64_t kTilesBetweenCancelChecks = 1 << 10;

// Time of `call` inside [start_ns, end_ns).
std::int64_t overlap(const TimelineCall& call, std::int64_t start_ns, std::int64_t end_ns) {
  return std::max<std::int64_t>(0, std::min(call.end_ns, end_ns) - std::max(call.start_ns, start_ns));
}

} // namespace

TimelineWindow query_tiled_window(const Database& database, const TimelineLane& lane, std::int64_t start_ns,
                                  std::int64_t end_ns, std::int64_t resolution_ns,
                                  const TimelineTileLevel& level, const std::atomic<bool>* cancel) {
  TimelineWindow window;
  // One bin per tile: a tile's colour is the exact dominant function of its span, while tiles
  // merged into pixel-wide bins could only vote with their own dominant function, which favours
  // the function of the busiest tile (docs/timeline-lod.md). Tiles are at most a pixel wide anyway.
  BinBuilder bins(level.tile_ns);
  CallsById calls_by_id(database);
  const auto first_tile = tile_index(start_ns, level.tile_ns),
             last_tile = tile_index(end_ns - 1, level.tile_ns);

  // The call drawn on its own that the scan is inside: its time is in the tiles' busy time but must
  // not be in the bins. Calls on one thread do not overlap, so there is at most one at a time, and
  // a call at least one tile long is the longest call starting in its tile: the tile names it.
  std::optional<TimelineCall> wide = call_running_at(database, lane, first_tile * level.tile_ns);
  if (wide && wide->end_ns - wide->start_ns < resolution_ns)
    wide.reset(); // a narrow call from before the window: its count lies in a tile before it
  if (wide)
    window.calls.push_back(*wide);

  auto tiles = database.prepare("SELECT tile, calls, busy_ns, dominant_function_id, longest_call_id, "
                                "longest_call_ns FROM timeline_tiles WHERE rank = ?1 AND thread = ?2 AND "
                                "level = ?3 AND tile BETWEEN ?4 AND ?5 ORDER BY tile");
  tiles.bind(1, lane.rank).bind(2, lane.thread).bind(3, level.level).bind(4, first_tile).bind(5, last_tile);
  std::uint64_t rows = 0;
  while (tiles.step()) {
    const auto tile_start = tiles.integer(0) * level.tile_ns, tile_end = tile_start + level.tile_ns;
    BinPart part{.start_ns = tile_start,
                 .end_ns = tile_end,
                 .calls = static_cast<std::uint64_t>(tiles.integer(1)),
                 .busy_ns = tiles.integer(2),
                 .function_id = static_cast<int>(tiles.integer(3))};
    const auto longest_id = tiles.optional_integer(4);
    const auto starting_wide =
        longest_id && tiles.integer(5) >= resolution_ns ? calls_by_id.find(*longest_id) : std::nullopt;
    if (wide)
      part.busy_ns -= overlap(*wide, tile_start, tile_end);
    if (starting_wide) {
      part.calls -= 1;
      part.busy_ns -= overlap(*starting_wide, tile_start, tile_end);
    }
    part.busy_ns = std::max<std::int64_t>(part.busy_ns, 0);
    // The tile's other calls started before its wide call (it reaches past the tile), so their
    // bin comes before it. A tile where no call starts only holds the end of a call from an
    // earlier tile: it joins that call's bin.
    if (part.calls > 0)
      bins.add(part, window.bins);
    else if (part.busy_ns > 0)
      bins.extend(part);
    if (starting_wide) {
      bins.close_into(window.bins);
      window.calls.push_back(*starting_wide);
      wide = starting_wide;
    }
    if (cancel && ++rows % kTilesBetweenCancelChecks == 0 && cancel->load(std::memory_order_relaxed))
      break;
  }
  bins.close_into(window.bins);
  return window;
}

} // namespace commlens::analysis
