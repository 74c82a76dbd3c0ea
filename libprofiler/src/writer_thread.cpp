#include "writer_thread.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

namespace commlens {

WriterThread::WriterThread(WriterInputs inputs, std::unique_ptr<RankStore> store)
    : inputs_(inputs), store_(std::move(store)), thread_([this] { run(); }) {}

WriterThread::~WriterThread() {
  if (thread_.joinable()) {
    stop();
  }
}

void WriterThread::wake() noexcept {
  {
    std::lock_guard lock(wake_mutex_);
    wake_requested_ = true;
  }
  wake_condition_.notify_one();
}

namespace {
// Records per trace chunk: the writer releases buffer slots a chunk at a time.
constexpr std::size_t kRecordsPerChunk = 4096;
} // namespace

void WriterThread::run() {
  const auto interval = std::chrono::milliseconds(inputs_.flush_interval_ms);
  // A flush that found a whole chunk or more means the application records fast: flush again
  // at once instead of sleeping.
  bool busy = false;
  std::unique_lock lock(wake_mutex_);
  while (!stopping_) {
    if (!busy) {
      wake_condition_.wait_for(lock, interval, [this] { return wake_requested_ || stopping_; });
    }
    if (stopping_) {
      break;
    }
    wake_requested_ = false;
    lock.unlock();
    busy = flush_or_give_up(Flush::Periodic) >= kRecordsPerChunk;
    lock.lock();
  }
}

void WriterThread::flush_now() {
  flush_or_give_up(Flush::Everything);
}

std::size_t WriterThread::flush_or_give_up(Flush kind) {
  if (failed_.load(std::memory_order_acquire)) {
    discard_rings();
    return 0;
  }
  try {
    return flush(kind);
  } catch (const std::exception& failure) {
    // The rank file cannot be written (the disk is full, the file was deleted or moved): the
    // profile of this rank is lost from here, but the program must go on. Application threads
    // drop their records from now on instead of waiting for a writer that no longer stores them,
    // and those waiting already are released.
    draining_.store(false, std::memory_order_release);
    if (!failed_.exchange(true, std::memory_order_acq_rel)) { // a flush_now() may have failed beside it
      std::fprintf(stderr, "commlens: writing the profile failed: %s; this rank records nothing more\n",
                   failure.what());
    }
    discard_rings();
    return 0;
  }
}

void WriterThread::discard_rings() {
  // A buffer has one reader at a time: the writer's thread and a flush_now() take turns, as flush().
  std::lock_guard lock(store_mutex_);
  inputs_.threads.for_each(
      [](ThreadRecorder& recorder) { recorder.ring().drain([](std::span<const EventRecord>) {}); });
}

void WriterThread::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_condition_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
  }
  // From here a full buffer drops its record instead of waiting: a thread still inside a call
  // that began before MPI_Finalize would otherwise wait for ever. The final flush drains what
  // every buffer holds, so a thread waiting now is woken by it.
  draining_.store(false, std::memory_order_release);
  flush_or_give_up(Flush::Final);
  std::lock_guard lock(store_mutex_);
  try {
    store_->close();
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "commlens: closing the profile failed: %s\n", failure.what());
  }
}

std::size_t WriterThread::flush(Flush kind) {
  const bool final = kind == Flush::Final;
  std::lock_guard lock(store_mutex_);
  const std::uint64_t started = monotonic_ns();
  store_->begin();
  // Buffers first: every communicator and phase a drained record refers to exists by now, so
  // the metadata stored next is enough to decode it.
  std::size_t stored = 0;
  inputs_.threads.for_each([&](ThreadRecorder& recorder) { stored += store_ring(recorder); });
  refresh_communicator_ids();
  // Summaries and counters are cumulative, rewritten whole: while the application records fast
  // the writer flushes back to back, and rewriting them at each flush took CPU time from the
  // application on the shared cores. Once per flush interval is as fresh as a sleeping writer's.
  const std::uint64_t interval_ns = std::uint64_t{inputs_.flush_interval_ms} * 1'000'000;
  if (kind != Flush::Periodic || started - last_summary_ns_ >= interval_ns) {
    store_metadata(final);
    store_summaries();
    last_summary_ns_ = started;
  }
  store_->commit();
  ++flushes_;
  busy_ns_ += monotonic_ns() - started;
  return stored;
}

void WriterThread::refresh_communicator_ids() {
  const std::uint64_t version = inputs_.communicators.version();
  if (version == communicator_version_) {
    return;
  }
  communicator_version_ = version;
  const auto communicators = inputs_.communicators.snapshot();
  communicator_ids_.clear();
  for (const CommunicatorInfo& info : communicators) {
    communicator_ids_.push_back(info.id);
  }
  store_->replace_communicators(communicators, inputs_.init_ns);
}

std::size_t WriterThread::store_ring(ThreadRecorder& recorder) {
  // Slots are released a chunk at a time, as soon as their records are encoded, so a thread
  // waiting on a full buffer goes on after one chunk rather than after the whole buffer. One
  // buffer's worth at most per flush: a thread refilling it as fast as it drains would otherwise
  // keep this transaction (and every other buffer) waiting.
  std::size_t stored = 0;
  while (stored < recorder.ring().capacity()) {
    encoder_.clear();
    const std::size_t drained = recorder.ring().drain(
        [&](std::span<const EventRecord> records) { encoder_.append(records); }, kRecordsPerChunk);
    if (drained == 0) {
      return stored;
    }
    store_->insert_chunk(recorder.thread_index(), encoder_.count(), encoder_.bytes());
    stored += drained;
  }
  return stored;
}

void WriterThread::store_summaries() {
  // Threads keep separate tables; the database holds one row per key for the whole rank.
  struct KeyOrder {
    bool operator()(const SummaryKey& a, const SummaryKey& b) const {
      return std::tie(a.function, a.communicator_index, a.size_bin, a.peer, a.phase) <
             std::tie(b.function, b.communicator_index, b.size_bin, b.peer, b.phase);
    }
  };
  std::map<SummaryKey, SummaryValues, KeyOrder> totals;
  // Per thread and phase: calls and ticks inside MPI (the thread's own share, kept beside the
  // rank's wall time in MPI, which counts overlapping calls of several threads once).
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::pair<std::uint64_t, std::uint64_t>> per_thread;
  inputs_.threads.for_each([&](const ThreadRecorder& recorder) {
    recorder.summary().for_each([&](const SummaryKey& key, const SummaryValues& values) {
      auto& [calls, ticks] = per_thread[{recorder.thread_index(), key.phase}];
      calls += values.count;
      ticks += values.ticks_total;
      auto [entry, inserted] = totals.try_emplace(key, values);
      if (!inserted) {
        SummaryValues& total = entry->second;
        total.count += values.count;
        total.bytes_sent += values.bytes_sent;
        total.bytes_recv += values.bytes_recv;
        total.ticks_total += values.ticks_total;
        total.ticks_min = std::min(total.ticks_min, values.ticks_min);
        total.ticks_max = std::max(total.ticks_max, values.ticks_max);
      }
    });
  });
  const TickConverter& clock = inputs_.clock;
  std::vector<CallStatsRow> rows;
  rows.reserve(totals.size());
  for (const auto& [key, values] : totals) {
    // The application keeps calling while the writer works: a call on a communicator created after
    // this flush took its snapshot of communicator ids is left for the next flush (the tables are
    // cumulative and rows are upserts), never stored under an unknown id, which would leave a
    // second row for the same calls once the id is known.
    const bool has_communicator = key.communicator_index != kNoCommunicator;
    if (has_communicator && key.communicator_index >= communicator_ids_.size()) {
      continue;
    }
    const std::int64_t comm = has_communicator ? communicator_ids_[key.communicator_index] : -1;
    rows.push_back(CallStatsRow{key.function, comm, key.size_bin, key.peer, key.phase, values.count,
                                values.bytes_sent, values.bytes_recv, clock.duration_ns(values.ticks_total),
                                clock.duration_ns(values.ticks_min), clock.duration_ns(values.ticks_max)});
  }
  store_->replace_call_stats(rows);
  std::vector<ThreadStatsRow> thread_rows;
  for (const auto& [thread_and_phase, calls_and_ticks] : per_thread) {
    thread_rows.push_back(ThreadStatsRow{thread_and_phase.first, thread_and_phase.second,
                                         calls_and_ticks.first, clock.duration_ns(calls_and_ticks.second)});
  }
  store_->replace_thread_stats(thread_rows);
}

std::pair<std::uint64_t, std::uint64_t> WriterThread::full_ring_waits() const {
  std::uint64_t waits = 0;
  std::uint64_t ticks = 0;
  inputs_.threads.for_each([&](const ThreadRecorder& recorder) {
    waits += recorder.full_ring_waits();
    ticks += recorder.full_ring_wait_ticks();
  });
  return {waits, inputs_.clock.duration_ns(ticks)};
}

std::uint64_t WriterThread::mpi_wall_ns() const {
  const TickConverter& clock = inputs_.clock;
  const bool concurrent = inputs_.inside_mpi.concurrent();
  std::uint64_t entered = 0;
  std::uint64_t left = 0;
  std::uint64_t calls_ticks = 0;
  inputs_.threads.for_each([&](const ThreadRecorder& recorder) {
    if (concurrent) {
      entered += recorder.rank_entered_ticks();
      left += recorder.rank_left_ticks();
    } else {
      recorder.summary().for_each(
          [&](const SummaryKey&, const SummaryValues& values) { calls_ticks += values.ticks_total; });
    }
  });
  if (!concurrent) {
    return clock.duration_ns(calls_ticks); // calls never overlap: their sum is their union
  }
  // A thread inside MPI now has entered without leaving yet: its interval so far ends now. Mid-run
  // the sums are read while threads move them, so the figure is bounded by the time since init;
  // at finalize the application is quiet and it is exact.
  const std::uint64_t ticks = left - entered + (inputs_.inside_mpi.threads_inside() > 0 ? now_ticks() : 0);
  const std::uint64_t since_init = clock.now_ns() - inputs_.init_ns;
  const auto as_signed = static_cast<std::int64_t>(ticks);
  return as_signed <= 0 ? 0 : std::min(clock.duration_ns(ticks), since_init);
}

void WriterThread::store_metadata(bool final) {
  const TickConverter& clock = inputs_.clock;
  const auto relative_ns = [&](std::uint64_t ticks) {
    return static_cast<std::int64_t>(clock.to_ns(ticks)) - static_cast<std::int64_t>(inputs_.init_ns);
  };
  RankMetadata::Snapshot metadata = inputs_.metadata.take_snapshot(metadata_version_, final);
  if (metadata.phases_and_run_values) {
    const auto& [phases, run_values] = *metadata.phases_and_run_values;
    std::vector<PhaseRow> rows;
    for (const RankMetadata::Phase& phase : phases) {
      rows.push_back(
          PhaseRow{phase.number, relative_ns(phase.start_ticks),
                   phase.end_ticks != 0 ? std::optional(relative_ns(phase.end_ticks)) : std::nullopt,
                   phase.pcontrol_level >= 0 ? std::optional(phase.pcontrol_level) : std::nullopt});
    }
    store_->replace_phases(rows);
    store_->replace_run_values(run_values);
  }
  metadata.overhead["writer"] = {flushes_, busy_ns_, std::nullopt};
  if (const auto waits = full_ring_waits(); waits.first > 0) {
    metadata.overhead["trace_wait"] = {waits.first, waits.second, std::nullopt};
  }
  store_->replace_overhead(metadata.overhead);
  for (const auto& [insert_sql, rows] : metadata.collector_rows) {
    store_->insert_rows(insert_sql, rows);
  }
  RankCounters counters;
  counters.alignment = metadata.alignment;
  counters.threads = inputs_.threads.count();
  const RankLosses losses = inputs_.threads.losses();
  counters.dropped_events = losses.dropped_events;
  counters.summary_overflow = losses.summary_overflow;
  counters.mpi_wall_ns = mpi_wall_ns();
  if (final) {
    counters.finalize_ns = static_cast<std::int64_t>(clock.now_ns() - inputs_.init_ns);
  }
  store_->update_counters(counters);
}

} // namespace commlens
