#pragma once
// The logic of the buffer-location caches, without CUDA (unit-tested on any machine): a few
// address ranges with what is known of them (where an MPI call's buffer lives; a copy's memory kind
// and device), filled from a lookup on a miss, and forgotten by every thread at once when the
// process allocates or frees GPU-visible memory, so that an address freed and handed out again for
// another kind of memory is looked up afresh.
#include "commlens/profiler/event_record.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace commlens::cuda {

template <class Value> struct Range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0; // exclusive; begin == end is an empty slot
  Value value{};
};

// How many times every cache was told to forget; a relaxed load per lookup is all a cache pays.
std::uint64_t forget_generation() noexcept;

// One per thread (no locking); forget_all() reaches the caches of all threads.
template <class Value> class RangeCache {
public:
  using Lookup = Range<Value> (*)(std::uintptr_t address);

  // What is known of `address`, from the cache or else from `lookup` (then cached); null: `unknown`.
  Value locate(std::uintptr_t address, Lookup lookup, Value unknown = Value{}) noexcept {
    if (address == 0) {
      return unknown;
    }
    if (const std::uint64_t now = forget_generation(); now != generation_) {
      ranges_ = {};
      next_slot_ = 0;
      generation_ = now;
    }
    for (const Range<Value>& range : ranges_) {
      if (address >= range.begin && address < range.end) {
        return range.value;
      }
    }
    const Range<Value> found = lookup(address);
    ranges_[next_slot_] = found;
    next_slot_ = (next_slot_ + 1) % kRanges;
    return found.value;
  }

  // Every cache drops its ranges before its next lookup. Called on allocations and frees.
  static void forget_all() noexcept;

private:
  static constexpr std::size_t kRanges = 16;
  std::array<Range<Value>, kRanges> ranges_{};
  std::size_t next_slot_ = 0;
  std::uint64_t generation_ = 0; // forget_generation() when ranges_ was last valid
};

void forget_all_ranges() noexcept;

template <class Value> void RangeCache<Value>::forget_all() noexcept {
  forget_all_ranges();
}

using LocatedRange = Range<BufferLocation>;
using LocationCache = RangeCache<BufferLocation>;

} // namespace commlens::cuda
