#include "location_cache.hpp"

#include <atomic>

namespace commlens::cuda {

namespace {
// Bumped on every allocation or free; a relaxed load per lookup is all a cache pays.
std::atomic<std::uint64_t> forget_count{0};
} // namespace

void LocationCache::forget_all() noexcept {
  forget_count.fetch_add(1, std::memory_order_relaxed);
}

BufferLocation LocationCache::locate(std::uintptr_t address, Lookup lookup) noexcept {
  if (address == 0) {
    return BufferLocation::Unknown;
  }
  if (const std::uint64_t now = forget_count.load(std::memory_order_relaxed); now != generation_) {
    ranges_ = {};
    next_slot_ = 0;
    generation_ = now;
  }
  for (const LocatedRange& range : ranges_) {
    if (address >= range.begin && address < range.end) {
      return range.location;
    }
  }
  const LocatedRange found = lookup(address);
  ranges_[next_slot_] = found;
  next_slot_ = (next_slot_ + 1) % kRanges;
  return found.location;
}

} // namespace commlens::cuda
