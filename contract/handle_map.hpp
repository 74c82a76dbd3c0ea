#pragma once
// Fixed-capacity, lock-free map from an MPI handle's value to a small payload. MPI handles are
// pointers in Open MPI and integers in MPICH; handle_key() turns either into a 64-bit key. Any
// thread may insert, find and erase concurrently: slots are claimed with one compare-and-swap and
// published with a release store, so a reader never sees a half-written payload. Probing is
// bounded, so a full or stale table costs a few cache lines, never a scan or a lock.
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace commlens::contract {

template <typename Handle> std::uint64_t handle_key(Handle handle) noexcept {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<std::uintptr_t>(handle);
  } else {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(handle)) + 1; // +1: handle 0 is valid
  }
}

template <typename Value> class HandleMap {
public:
  struct Slot {
    std::atomic<std::uint64_t> key{kEmpty};
    Value value{};
  };

  explicit HandleMap(std::size_t capacity)
      : mask_(std::bit_ceil(capacity) - 1), slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

  // Stores value under key, replacing an entry left under the same key (a handle MPI reused after
  // a completion the collector did not see). Returns null when no slot is free within the probe limit.
  Slot* insert(std::uint64_t key, const Value& value) noexcept {
    if (Slot* existing = find(key)) {
      existing->value = value;
      return existing;
    }
    return add(key, value);
  }

  // Stores value under key even when the key is present: Open MPI hands out one shared request
  // handle for every send that completed while being posted, so live requests can share a key.
  Slot* add(std::uint64_t key, const Value& value) noexcept {
    for (std::size_t probe = 0, index = home(key); probe < probe_limit();
         ++probe, index = (index + 1) & mask_) {
      Slot& slot = slots_[index];
      std::uint64_t seen = slot.key.load(std::memory_order_relaxed);
      if ((seen == kEmpty || seen == kErased) &&
          slot.key.compare_exchange_strong(seen, kClaimed, std::memory_order_acquire)) {
        slot.value = value;
        slot.key.store(key, std::memory_order_release);
        return &slot;
      }
    }
    failed_inserts_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

  // Of the entries under key, the one `before` orders first. Entries are never placed past an
  // empty slot of their probe sequence, so scanning up to one finds them all.
  template <typename Before> Slot* find_first(std::uint64_t key, Before before) noexcept {
    Slot* best = nullptr;
    for (std::size_t probe = 0, index = home(key); probe < probe_limit();
         ++probe, index = (index + 1) & mask_) {
      Slot& slot = slots_[index];
      const std::uint64_t seen = slot.key.load(std::memory_order_acquire);
      if (seen == kEmpty) {
        break;
      }
      if (seen == key && (best == nullptr || before(slot.value, best->value))) {
        best = &slot;
      }
    }
    return best;
  }

  Slot* find(std::uint64_t key) noexcept {
    for (std::size_t probe = 0, index = home(key); probe < probe_limit();
         ++probe, index = (index + 1) & mask_) {
      Slot& slot = slots_[index];
      const std::uint64_t seen = slot.key.load(std::memory_order_acquire);
      if (seen == key) {
        return &slot;
      }
      if (seen == kEmpty) {
        return nullptr;
      }
    }
    return nullptr;
  }

  void erase(Slot* slot) noexcept { slot->key.store(kErased, std::memory_order_release); }

  std::uint64_t failed_inserts() const noexcept { return failed_inserts_.load(std::memory_order_relaxed); }

private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kErased = ~0ull;
  static constexpr std::uint64_t kClaimed = ~0ull - 1;
  static constexpr std::size_t kMaxProbes = 64;

  std::size_t home(std::uint64_t key) const noexcept {
    key ^= key >> 31;
    key *= 0x9E3779B97F4A7C15ull;
    return (key ^ (key >> 29)) & mask_;
  }
  std::size_t probe_limit() const noexcept { return mask_ + 1 < kMaxProbes ? mask_ + 1 : kMaxProbes; }

  std::size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<std::uint64_t> failed_inserts_{0};
};

} // namespace commlens::contract
