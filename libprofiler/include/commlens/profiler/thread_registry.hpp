#pragma once
// Every application thread's recorder, in registration order. Threads register themselves
// without a lock (one slot each, never reused); the writer walks the slots filled so far.
#include "commlens/profiler/thread_recorder.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace commlens {

// What a rank lost so far (ranks.dropped_events, ranks.summary_overflow).
struct RankLosses {
  // Trace records dropped (pushed into a full ring after the writer stopped), calls of threads past
  // the thread limit. A full ring otherwise makes the calling thread wait: see trace_waits.
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0; // calls no summary table could count
};

class ThreadRegistry {
public:
  // A recorder for the calling thread; null when the thread limit is reached or memory ran out
  // (the thread's calls are then counted as dropped).
  ThreadRecorder* register_thread(int rank, RingDrainer* drainer, std::size_t ring_capacity,
                                  std::size_t summary_slots) noexcept;
  ThreadRecorder* refuse_thread() noexcept {
    threads_refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

  std::uint16_t count() const noexcept { return thread_count_.load(std::memory_order_acquire); }
  // Calls visit(ThreadRecorder&) for each registered thread, in registration order.
  template <typename Visit> void for_each(Visit&& visit) const {
    const std::uint16_t threads = count();
    for (std::uint16_t index = 0; index < threads; ++index) {
      if (ThreadRecorder* recorder = threads_[index].load(std::memory_order_acquire)) {
        visit(*recorder);
      }
    }
  }
  // Exact once the application threads are quiet.
  RankLosses losses() const noexcept;

private:
  std::array<std::atomic<ThreadRecorder*>, ThreadRecorder::kMaxThreads> threads_{};
  std::atomic<std::uint16_t> thread_count_{0};
  std::atomic<std::uint64_t> threads_refused_{0};
};

} // namespace commlens
