#pragma once
// Per-thread aggregates for summary mode: function x communicator x size bin x peer x phase ->
// count, bytes, time. Open addressing over a fixed array, so updates never allocate. The owning
// thread is the only writer; the writer thread reads a snapshot with relaxed loads at each flush
// (fields of one slot may be a call apart mid-run; at finalize the application is quiet and the
// snapshot is exact).
#include "commlens/profiler/event_record.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

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
  explicit SummaryTable(std::size_t capacity);

  // Owner thread only. Returns false when the table is full and the call could not be counted.
  bool add(const SummaryKey& key, std::uint64_t bytes_sent, std::uint64_t bytes_recv,
           std::uint64_t ticks) noexcept {
    // Loops repeat the same call: the previous slot usually matches and saves the hash and probe.
    Slot* slot = last_ != nullptr && last_->key == key ? last_ : find_or_claim(key);
    if (slot == nullptr) {
      overflowed_.store(overflowed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return false;
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
    for (std::size_t i = 0; i <= mask_; ++i) {
      const Slot& slot = slots_[i];
      if (!slot.used.load(std::memory_order_acquire)) {
        continue;
      }
      SummaryValues values{
          slot.count.load(std::memory_order_relaxed),      slot.bytes_sent.load(std::memory_order_relaxed),
          slot.bytes_recv.load(std::memory_order_relaxed), slot.ticks_total.load(std::memory_order_relaxed),
          slot.ticks_min.load(std::memory_order_relaxed),  slot.ticks_max.load(std::memory_order_relaxed)};
      if (values.count != 0) {
        visit(slot.key, values);
      }
    }
  }

  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }

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

  Slot* find_or_claim(const SummaryKey& key) noexcept {
    std::size_t index = hash(key) & mask_;
    // Bounded probing: a nearly full table costs a few cache lines, never a scan.
    constexpr std::size_t kMaxProbes = 64;
    for (std::size_t probes = 0; probes < kMaxProbes && probes <= mask_;
         ++probes, index = (index + 1) & mask_) {
      Slot& slot = slots_[index];
      if (!slot.used.load(std::memory_order_relaxed)) {
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

  std::size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  Slot* last_ = nullptr; // owner thread only
  std::atomic<std::uint64_t> overflowed_{0};
};

} // namespace commlens
