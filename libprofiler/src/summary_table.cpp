#include "commlens/profiler/summary_table.hpp"

#include <algorithm>
#include <new>

namespace commlens {

namespace {
std::size_t power_of_two_at_least(std::size_t capacity) {
  return std::bit_ceil(std::max(capacity, std::size_t{2}));
}
} // namespace

SummaryTable::Slots::Slots(std::size_t capacity)
    : mask(capacity - 1), max_used(capacity - capacity / 4), slots(std::make_unique<Slot[]>(capacity)) {}

SummaryTable::SummaryTable(std::size_t capacity, std::size_t max_capacity)
    : max_capacity_(power_of_two_at_least(std::max(capacity, max_capacity))) {
  owned_.push_back(std::make_unique<Slots>(power_of_two_at_least(capacity)));
  table_ = owned_.back().get();
  current_.store(table_, std::memory_order_release);
}

SummaryTable::Slot* SummaryTable::grow_and_claim(const SummaryKey& key) noexcept {
  const Slots& old = *table_;
  // Bounded probing can fail below the load limit; the doubled array then has room again.
  for (std::size_t capacity = 2 * (old.mask + 1); capacity <= max_capacity_; capacity *= 2) {
    try {
      owned_.reserve(owned_.size() + 1);
      auto grown = std::make_unique<Slots>(capacity);
      bool moved_all = true;
      for (std::size_t i = 0; i <= old.mask && moved_all; ++i) {
        const Slot& from = old.slots[i];
        if (!from.used.load(std::memory_order_relaxed)) {
          continue;
        }
        Slot* to = find_or_claim(*grown, from.key);
        moved_all = to != nullptr;
        if (moved_all) {
          const SummaryValues values = from.values();
          to->count.store(values.count, std::memory_order_relaxed);
          to->bytes_sent.store(values.bytes_sent, std::memory_order_relaxed);
          to->bytes_recv.store(values.bytes_recv, std::memory_order_relaxed);
          to->ticks_total.store(values.ticks_total, std::memory_order_relaxed);
          to->ticks_min.store(values.ticks_min, std::memory_order_relaxed);
          to->ticks_max.store(values.ticks_max, std::memory_order_relaxed);
        }
      }
      Slot* slot = moved_all ? find_or_claim(*grown, key) : nullptr;
      if (slot == nullptr) {
        continue;
      }
      // The copies above are published with the array: the writer's acquire load sees them.
      table_ = grown.get();
      current_.store(table_, std::memory_order_release);
      owned_.push_back(std::move(grown));
      last_ = nullptr; // pointed into the old array
      return slot;
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }
  return nullptr;
}

} // namespace commlens
