#pragma once
// What one application thread owns: its event ring (trace mode), its summary table and its call-id
// sequence. Only the owning thread writes; the writer thread reads.
#include "commlens/profiler/event_ring.hpp"
#include "commlens/profiler/summary_table.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace commlens {

// What a recorder needs from its profiler when its ring is full: wake the writer, and know
// whether a writer will still drain the ring.
class RingDrainer {
public:
  virtual void wake_writer() noexcept = 0;
  virtual bool writer_draining() const noexcept = 0;

protected:
  ~RingDrainer() = default;
};

class ThreadRecorder {
public:
  // Call ids are unique job-wide: rank << 46 | thread << 36 | sequence.
  static constexpr int kThreadBits = 10;
  static constexpr int kSequenceBits = 36;
  static constexpr std::uint16_t kMaxThreads = 1u << kThreadBits;

  // drainer: null in summary mode (no ring to drain).
  ThreadRecorder(int rank, std::uint16_t thread_index, RingDrainer* drainer, std::size_t ring_capacity,
                 std::size_t summary_slots);

  std::uint16_t thread_index() const noexcept { return thread_index_; }
  std::uint64_t next_call_id() noexcept { return id_base_ + ++sequence_; }

  // Returns true when the writer should be woken (the ring crossed half full).
  bool record_call(const EventRecord& call, std::uint16_t phase) noexcept {
    summary_.add(
        SummaryKey{call.function,
                   static_cast<std::int16_t>(size_bin_of(std::max(call.bytes_sent, call.bytes_recv))), phase,
                   call.peer, call.communicator_index},
        call.bytes_sent, call.bytes_recv, call.end_ticks - call.start_ticks);
    return trace_ && push(call);
  }
  bool record_request_completion(const EventRecord& completion) noexcept {
    return trace_ && push(completion);
  }

  EventRing& ring() noexcept { return ring_; }
  const EventRing& ring() const noexcept { return ring_; }
  // Times this thread found its ring full and waited for the writer, and the ticks it waited.
  std::uint64_t full_ring_waits() const noexcept { return full_ring_waits_.load(std::memory_order_relaxed); }
  std::uint64_t full_ring_wait_ticks() const noexcept {
    return full_ring_wait_ticks_.load(std::memory_order_relaxed);
  }
  const SummaryTable& summary() const noexcept { return summary_; }

  // This thread made the rank's count of threads inside MPI leave zero (entered) or return to it
  // (left), at `ticks` (InsideMpiCounter, kept under MPI_THREAD_MULTIPLE only). Summed over
  // threads, left - entered is the rank's wall time in MPI; the sums wrap around, their difference
  // does not.
  void note_rank_entered_mpi(std::uint64_t ticks) noexcept { bump(rank_entered_ticks_, ticks); }
  void note_rank_left_mpi(std::uint64_t ticks) noexcept { bump(rank_left_ticks_, ticks); }
  std::uint64_t rank_entered_ticks() const noexcept {
    return rank_entered_ticks_.load(std::memory_order_relaxed);
  }
  std::uint64_t rank_left_ticks() const noexcept { return rank_left_ticks_.load(std::memory_order_relaxed); }

private:
  // Owner thread only writes, so a plain load + store is enough.
  static void bump(std::atomic<std::uint64_t>& sum, std::uint64_t ticks) noexcept {
    sum.store(sum.load(std::memory_order_relaxed) + ticks, std::memory_order_relaxed);
  }

  bool push(const EventRecord& record) noexcept {
    return ring_.try_push(record) ? ring_.needs_drain() : push_when_full(record);
  }
  // Back-pressure: waits for the writer to release slots (a flood of calls must not lose records),
  // dropping and counting the record only when no writer will drain the ring any more.
  [[gnu::cold, gnu::noinline]] bool push_when_full(const EventRecord& record) noexcept;

  std::uint16_t thread_index_;
  bool trace_;
  RingDrainer* drainer_;
  std::uint64_t id_base_;
  std::uint64_t sequence_ = 0;
  EventRing ring_;
  SummaryTable summary_;
  std::atomic<std::uint64_t> rank_entered_ticks_{0};
  std::atomic<std::uint64_t> rank_left_ticks_{0};
  std::atomic<std::uint64_t> full_ring_waits_{0};
  std::atomic<std::uint64_t> full_ring_wait_ticks_{0};
};

} // namespace commlens
