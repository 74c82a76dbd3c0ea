#include "commlens/profiler/thread_recorder.hpp"

#include "commlens/profiler/clock.hpp"

namespace commlens {

ThreadRecorder::ThreadRecorder(int rank, std::uint16_t thread_index, RingDrainer* drainer,
                               std::size_t ring_capacity, std::size_t summary_slots)
    : thread_index_(thread_index), trace_(drainer != nullptr), drainer_(drainer),
      id_base_((static_cast<std::uint64_t>(rank) << (kThreadBits + kSequenceBits)) |
               (static_cast<std::uint64_t>(thread_index) << kSequenceBits)),
      // Summary mode stores no trace records: a minimal ring keeps memory per thread small.
      ring_(trace_ ? ring_capacity : 2), summary_(summary_slots) {}

bool ThreadRecorder::push_when_full(const EventRecord& record) noexcept {
  const std::uint64_t began = now_ticks();
  while (!ring_.try_push(record)) {
    if (!drainer_->writer_draining()) {
      ring_.count_drop();
      return false;
    }
    drainer_->wake_writer();
    ring_.wait_for_release();
  }
  bump(full_ring_waits_, 1);
  bump(full_ring_wait_ticks_, now_ticks() - began);
  return false; // the writer is awake already
}

} // namespace commlens
