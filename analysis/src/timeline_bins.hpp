#pragma once
// Merges spans of a lane narrower than the resolution into the bins of a TimelineWindow: calls on
// the raw path (bins less than a pixel wide), level-of-detail tiles on the tiled path (one bin per
// tile, timeline_tile_query.cpp).
#include "commlens/analysis/timeline.hpp"
#include "commlens/profiler/dominant_function.hpp"

#include <cstdint>
#include <vector>

namespace commlens::analysis {

// One call narrower than the resolution, or what one tile holds.
struct BinPart {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t calls = 0;
  std::int64_t busy_ns = 0;
  int function_id = 0; // a tile: its dominant function, voting with the tile's busy time
};

class BinBuilder {
public:
  // Parts starting `bin_ns` or more after a bin's start go into the next bin.
  explicit BinBuilder(std::int64_t bin_ns) : bin_ns_(bin_ns) {}

  // Adds `part` to the open bin if it starts less than bin_ns after the bin's start; else
  // closes that bin into `bins` and opens a new one with `part`.
  void add(const BinPart& part, std::vector<TimelineBin>& bins);
  // Adds `part` to the open bin however far it lies; false (nothing added) when no bin is open.
  bool extend(const BinPart& part);
  void close_into(std::vector<TimelineBin>& bins);

private:
  std::int64_t bin_ns_;
  TimelineBin current_;
  bool open_ = false;
  DominantFunction dominant_;
};

} // namespace commlens::analysis
