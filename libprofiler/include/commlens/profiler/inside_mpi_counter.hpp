#pragma once
// How many of the process's threads are inside an MPI call right now. A rank's time in MPI is the
// wall time during which this count was above zero, not the sum of its threads' call times (four
// threads in MPI_Sendrecv for one second are one second of the rank in MPI, not four). The thread
// that moves the count off zero adds its entry tick to its own recorder, the one that brings it
// back adds its exit tick, so the rank's time in MPI is the sum over threads of (exits - entries):
// the only shared write per call is the count itself.
//
// Below MPI_THREAD_MULTIPLE calls of two threads never overlap, so the count is not kept at all
// (it cost a few ns a call): the rank's time in MPI is then the sum of its calls' times, which the
// writer takes from the summary tables.
//
// The call's entry and exit ticks are read inside the count's update: a compare-exchange that
// succeeds only if no other thread changed the count (or its version) since the tick was read.
// Otherwise a thread preempted between reading its tick and updating the count would hold the
// count over time outside its call, and the rank's time in MPI would exceed the union of its calls.
#include "commlens/profiler/clock.hpp"

#include <atomic>
#include <cstdint>

namespace commlens {

class InsideMpiCounter {
public:
  struct Transition {
    std::uint64_t ticks; // the call's entry or exit tick
    bool rank_idle;      // entry: no thread was inside MPI before; exit: none is any more
  };

  // MPI_THREAD_MULTIPLE: calls of several threads may overlap, and the count is kept.
  void set_concurrent(bool concurrent) noexcept { concurrent_ = concurrent; }
  bool concurrent() const noexcept { return concurrent_; }

  Transition enter() noexcept { return concurrent_ ? update(kOneCall) : Transition{now_ticks(), false}; }
  Transition leave() noexcept { return concurrent_ ? update(-kOneCall) : Transition{now_ticks(), false}; }

  std::uint32_t threads_inside() const noexcept {
    return static_cast<std::uint32_t>(state_.load(std::memory_order_relaxed) & kCountMask);
  }

private:
  // The count in the low 32 bits, a version in the high 32 bits that every update moves on, so
  // that a count changed and changed back between the tick and the exchange is noticed.
  static constexpr std::int64_t kOneCall = 1;
  static constexpr std::uint64_t kVersion = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kCountMask = kVersion - 1;

  Transition update(std::int64_t change) noexcept {
    std::uint64_t state = state_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t ticks = now_ticks();
      const std::uint64_t next = state + kVersion + static_cast<std::uint64_t>(change);
      if (state_.compare_exchange_weak(state, next, std::memory_order_relaxed)) {
        return {ticks, ((change > 0 ? state : next) & kCountMask) == 0};
      }
    }
  }

  alignas(64) std::atomic<std::uint64_t> state_{0}; // a line of its own: every call writes it
  bool concurrent_ = false;
};

} // namespace commlens
