#pragma once
// Single-producer single-consumer ring of EventRecords: the owning application thread appends,
// the writer thread drains. No locks. A full ring is not a lost record: the producer waits for the
// writer to release slots (ThreadRecorder does, out of line), so memory stays bounded by the ring
// and nothing is dropped while a writer runs. Only a record pushed after the writer stopped for
// good is dropped, and counted.
#include "commlens/profiler/event_record.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace commlens {

class EventRing {
public:
  // capacity is rounded up to a power of two.
  explicit EventRing(std::size_t capacity);

  // Producer side (owning thread only). Returns false when the ring is full; nothing was stored.
  bool try_push(const EventRecord& record) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ > mask_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head - cached_tail_ > mask_) {
        return false;
      }
    }
    slots_[head & mask_] = record;
    // The slots a few calls ahead were last touched by the writer thread on another core; asking
    // for them now hides that miss, which otherwise costs more than the rest of the call.
    __builtin_prefetch(&slots_[(head + kPrefetchDistance) & mask_], 1);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  // True when the ring just crossed half full: the producer should wake the writer (once).
  bool needs_drain() const noexcept {
    return head_.load(std::memory_order_relaxed) - cached_tail_ == (mask_ + 1) / 2;
  }
  // Producer side, ring full: sleeps until the consumer releases slots (release() wakes it), or
  // returns at once when it already has.
  void wait_for_release() noexcept { tail_.wait(cached_tail_, std::memory_order_acquire); }
  // Producer side: a record that could not be stored because no consumer will ever drain it.
  void count_drop() noexcept {
    dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Consumer side (writer thread only): hands out at most `limit` of the records ready now as at
  // most two contiguous spans, then releases their slots to the producer. Returns their number.
  template <typename Visitor> std::size_t drain(Visitor&& visit, std::size_t limit = SIZE_MAX) {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    if (head == tail) {
      return 0;
    }
    const std::size_t first = tail & mask_;
    const std::size_t count = head - tail < limit ? head - tail : limit;
    const std::size_t first_len = count < capacity() - first ? count : capacity() - first;
    visit(std::span<const EventRecord>(slots_.get() + first, first_len));
    if (first_len < count) {
      visit(std::span<const EventRecord>(slots_.get(), count - first_len));
    }
    tail_.store(tail + count, std::memory_order_release);
    tail_.notify_one(); // a producer may be waiting for these slots (no system call when none is)
    return count;
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  std::uint64_t pushed() const noexcept { return head_.load(std::memory_order_relaxed); }

private:
  static constexpr std::uint64_t kPrefetchDistance = 4;
  std::uint64_t mask_;
  std::unique_ptr<EventRecord[]> slots_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::uint64_t cached_tail_ = 0;
  std::atomic<std::uint64_t> dropped_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

} // namespace commlens
