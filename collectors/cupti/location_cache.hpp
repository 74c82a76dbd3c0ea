#pragma once
// The logic of the buffer-location cache, without CUDA (unit-tested on any machine): a few
// address ranges with their location, filled from a lookup on a miss, and forgotten by every
// thread at once when the process allocates or frees GPU-visible memory, so that an address freed
// and handed out again for another kind of memory is looked up afresh.
#include "commlens/profiler/event_record.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace commlens::cuda {

struct LocatedRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0; // exclusive; begin == end is an empty slot
  BufferLocation location = BufferLocation::Unknown;
};

// One per thread (no locking); forget_all() reaches the caches of all threads.
class LocationCache {
public:
  using Lookup = LocatedRange (*)(std::uintptr_t address);

  // The location of `address`, from the cache or else from `lookup` (then cached).
  BufferLocation locate(std::uintptr_t address, Lookup lookup) noexcept;

  // Every cache drops its ranges before its next lookup. Called on allocations and frees.
  static void forget_all() noexcept;

private:
  static constexpr std::size_t kRanges = 16;
  std::array<LocatedRange, kRanges> ranges_{};
  std::size_t next_slot_ = 0;
  std::uint64_t generation_ = 0; // forget_all() count when ranges_ was last valid
};

} // namespace commlens::cuda
