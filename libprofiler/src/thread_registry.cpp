#include "commlens/profiler/thread_registry.hpp"

#include <new>

namespace commlens {

ThreadRecorder* ThreadRegistry::register_thread(int rank, RingDrainer* drainer, std::size_t ring_capacity,
                                                std::size_t summary_slots) noexcept {
  std::uint16_t index = thread_count_.load(std::memory_order_relaxed);
  do {
    if (index >= ThreadRecorder::kMaxThreads) {
      return refuse_thread();
    }
  } while (!thread_count_.compare_exchange_weak(index, static_cast<std::uint16_t>(index + 1),
                                                std::memory_order_acq_rel));
  try {
    auto* recorder = new ThreadRecorder(rank, index, drainer, ring_capacity, summary_slots);
    threads_[index].store(recorder, std::memory_order_release);
    return recorder;
  } catch (const std::bad_alloc&) {
    return refuse_thread();
  }
}

RankLosses ThreadRegistry::losses() const noexcept {
  RankLosses losses;
  losses.dropped_events = threads_refused_.load(std::memory_order_relaxed);
  for_each([&](const ThreadRecorder& recorder) {
    losses.dropped_events += recorder.ring().dropped();
    losses.summary_overflow += recorder.summary().overflowed();
  });
  return losses;
}

} // namespace commlens
