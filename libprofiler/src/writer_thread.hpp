#pragma once
// The one thread per process that moves records from the application threads' buffers into the
// rank's SQLite file: woken every flush interval or when a buffer passes half full, it stores
// everything ready in one transaction, trace records as compact chunks only (the merge turns them
// into rows). An application thread waits for it only when its buffer is full. Where the file
// cannot be written, the writer says so once and the program goes on unprofiled.
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/communicator_table.hpp"
#include "commlens/profiler/event_codec.hpp"
#include "commlens/profiler/inside_mpi_counter.hpp"
#include "commlens/profiler/rank_metadata.hpp"
#include "commlens/profiler/thread_registry.hpp"
#include "rank_store.hpp"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace commlens {

// What the writer reads, each part owned by the profiler: the threads' recorders, the
// communicators, the rank's metadata and the clock. The writer never sees the profiler itself.
struct WriterInputs {
  const ThreadRegistry& threads;
  RankMetadata& metadata;
  const CommunicatorTable& communicators;
  const InsideMpiCounter& inside_mpi;
  const TickConverter& clock;
  std::uint64_t init_ns; // the clock's ns at MPI_Init: the rank file's times count from it
  std::uint32_t flush_interval_ms;
};

class WriterThread {
public:
  WriterThread(WriterInputs inputs, std::unique_ptr<RankStore> store);
  ~WriterThread();

  void wake() noexcept;
  // True until stop() has begun its final flush: until then a full buffer will be drained.
  bool draining() const noexcept { return draining_.load(std::memory_order_acquire); }
  // Stores everything recorded so far before returning (from any thread).
  void flush_now();
  // Final flush (marking the rank finalized), then the file is closed and the thread ends.
  void stop();

private:
  void run();
  // Periodic: the writer's own flush, summaries and metadata at most once per flush interval.
  // Everything: a flush asked for (flush_now). Final: everything, and the rank marked finalized.
  enum class Flush { Periodic, Everything, Final };
  // Stores what the buffers hold as trace chunks, plus summaries and metadata as `kind` says;
  // returns the number of trace records stored.
  std::size_t flush(Flush kind);
  // flush(), unless the rank file could not be written before: then nothing, for good.
  std::size_t flush_or_give_up(Flush kind);
  // Empties every thread's buffer unstored, releasing any thread that waits on a full one.
  void discard_rings();
  std::size_t store_ring(ThreadRecorder& recorder);
  void store_summaries();
  // How often application threads found their buffer full and waited, and for how long (ns).
  std::pair<std::uint64_t, std::uint64_t> full_ring_waits() const;
  // Wall time so far during which at least one application thread was inside MPI.
  std::uint64_t mpi_wall_ns() const;
  void store_metadata(bool final);
  void refresh_communicator_ids();

  WriterInputs inputs_;
  std::unique_ptr<RankStore> store_;

  std::mutex store_mutex_; // one flush at a time: the writer's own or a flush_now()
  std::uint64_t communicator_version_ = ~0ull;
  std::vector<std::int64_t> communicator_ids_;
  std::uint64_t metadata_version_ = ~0ull;
  ChunkEncoder encoder_;
  std::uint64_t last_summary_ns_ = 0; // when a flush last stored summaries and metadata
  std::uint64_t flushes_ = 0;
  std::uint64_t busy_ns_ = 0;

  std::mutex wake_mutex_;
  std::condition_variable wake_condition_;
  bool wake_requested_ = false;
  bool stopping_ = false;
  std::atomic<bool> draining_{true};
  std::atomic<bool> failed_{false}; // a flush failed: the rank file is given up
  std::thread thread_;
};

} // namespace commlens
