#pragma once
// Per-thread aggregates for summary mode: function x communicator x size bin x peer x phase ->
// count, bytes, time. Open addressing over an array, so an update of a known key never allocates.
// A new key that would fill the array past three quarters moves every slot into an array twice as
// large (a communicator created and freed per step adds keys for ever; no call is lost to a full
// table). The owning thread is the only writer; the writer thread reads a snapshot with relaxed
// loads at each flush (fields of one slot may be a call apart mid-run; at finalize the application
// is quiet and the snapshot is exact).
#include "commlens/profiler/event_record.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace commlens {

// Power-of-two message-size bin: bin k holds [2^k, 2^(k+1)) bytes; zero bytes is bin -1.
inline int size_bin_of(std::uint64_t bytes) noexcept {
  return bytes == 0 ? -1 : static_cast<int>(std::bit_width(bytes)) - 1;
}

struct SummaryKey {
  FunctionId function;
  std::int16_t size_bin;
  std::uint16_t phase;
  std::int32_t peer;
  std::uint32_t communicator_index;
  bool operator==(const SummaryKey&) const = default;
};

struct SummaryValues {
  std::uint64_t count;
  std::uint64_t bytes_sent;
  std::uint64_t bytes_recv;
  std::uint64_t ticks_total;
  std::uint64_t ticks_min;
  std::uint64_t ticks_max;
};

class SummaryTable {
public:
  // 2^22 slots, about 3 million keys and 300 MB (plus the smaller arrays before it) per thread: far
  // beyond any program seen, and a bound before the memory of a node runs out.
  static constexpr std::size_t kDefaultMaxCapacity = std::size_t{1} << 22;

  explicit SummaryTable(std::size_t capacity, std::size_t max_capacity = kDefaultMaxCapacity);

  // Owner thread only. Returns false when the call could not be counted: the table reached
  // max_capacity, or growing it failed to allocate.
  bool add(const SummaryKey& key, std::uint64_t bytes_sent, std::uint64_t bytes_recv,
           std::uint64_t ticks) noexcept {
    // Loops repeat the same call: the previous slot usually matches and saves the hash and probe.
    Slot* slot = last_ != nullptr && last_->key == key ? last_ : find_or_claim(*table_, key);
    if (slot == nullptr) [[unlikely]] {
      slot = grow_and_claim(key);
      if (slot == nullptr) {
        overflowed_.store(overflowed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return false;
      }
    }
    bump(slot->count, 1);
    bump(slot->bytes_sent, bytes_sent);
    bump(slot->bytes_recv, bytes_recv);
    bump(slot->ticks_total, ticks);
    if (ticks < slot->ticks_min.load(std::memory_order_relaxed)) {
      slot->ticks_min.store(ticks, std::memory_order_relaxed);
    }
    if (ticks > slot->ticks_max.load(std::memory_order_relaxed)) {
      slot->ticks_max.store(ticks, std::memory_order_relaxed);
    }
    last_ = slot;
    return true;
  }

  // Any thread: visits every used slot as (key, values).
  template <typename Visitor> void for_each(Visitor&& visit) const {
    const Slots& table = *current_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i <= table.mask; ++i) {
      const Slot& slot = table.slots[i];
      if (!slot.used.load(std::memory_order_acquire)) {
        continue;
      }
      const SummaryValues values = slot.values();
      if (values.count != 0) {
        visit(slot.key, values);
      }
    }
  }

  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }
  // Any thread: the slots the table has now (it takes keys up to three quarters of them).
  std::size_t capacity() const noexcept { return current_.load(std::memory_order_acquire)->mask + 1; }

private:
  struct Slot {
    SummaryKey key{};
    std::atomic<bool> used{false};
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> bytes_sent{0};
    std::atomic<std::uint64_t> bytes_recv{0};
    std::atomic<std::uint64_t> ticks_total{0};
    std::atomic<std::uint64_t> ticks_min{~0ull};
    std::atomic<std::uint64_t> ticks_max{0};

    SummaryValues values() const noexcept {
      return {count.load(std::memory_order_relaxed),      bytes_sent.load(std::memory_order_relaxed),
              bytes_recv.load(std::memory_order_relaxed), ticks_total.load(std::memory_order_relaxed),
              ticks_min.load(std::memory_order_relaxed),  ticks_max.load(std::memory_order_relaxed)};
    }
  };

  struct Slots {
    explicit Slots(std::size_t capacity);
    std::size_t mask;
    std::size_t used = 0; // owner thread only
    std::size_t max_used; // three quarters of the capacity: probes stay short
    std::unique_ptr<Slot[]> slots;
  };

  // Single writer, so a plain load + store is enough and avoids a locked instruction.
  static void bump(std::atomic<std::uint64_t>& field, std::uint64_t amount) noexcept {
    field.store(field.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }

  static std::uint64_t hash(const SummaryKey& key) noexcept {
    std::uint64_t h = (std::uint64_t{key.function} << 48) ^
                      (std::uint64_t(std::uint16_t(key.size_bin)) << 32) ^ (std::uint64_t{key.phase} << 40) ^
                      std::uint32_t(key.peer) ^
                      (std::uint64_t{key.communicator_index} * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
  }

  // The key's slot, claimed if new; null when a new key would fill the table past max_used (or
  // probing found no room).
  static Slot* find_or_claim(Slots& table, const SummaryKey& key) noexcept {
    std::size_t index = hash(key) & table.mask;
    // Bounded probing: a nearly full table costs a few cache lines, never a scan.
    constexpr std::size_t kMaxProbes = 64;
    for (std::size_t probes = 0; probes < kMaxProbes && probes <= table.mask;
         ++probes, index = (index + 1) & table.mask) {
      Slot& slot = table.slots[index];
      if (!slot.used.load(std::memory_order_relaxed)) {
        if (table.used >= table.max_used) {
          return nullptr;
        }
        ++table.used;
        slot.key = key;
        slot.used.store(true, std::memory_order_release);
        return &slot;
      }
      if (slot.key == key) {
        return &slot;
      }
    }
    return nullptr;
  }

  // Cold path: moves every key into a larger array, publishes it, then claims `key` there.
  Slot* grow_and_claim(const SummaryKey& key) noexcept;

  std::size_t max_capacity_;
  // Every array this table had, the current one last. Older ones stay allocated: the writer thread
  // may still be reading one it loaded before the owner moved on (their total is below the
  // current array's size).
  std::vector<std::unique_ptr<Slots>> owned_;
  Slots* table_;                      // owner thread only: the current array
  std::atomic<const Slots*> current_; // the same, for the writer thread
  Slot* last_ = nullptr;              // owner thread only
  std::atomic<std::uint64_t> overflowed_{0};
};

} // namespace commlens
