#pragma once
// The per-process profiler: owns the configuration, the clock, the threads' recorders, the
// communicator table, the rank's metadata and the writer thread (given those parts, not itself).
// Collectors call Profiler::active() on their hot path; it is null until start() succeeded.
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/communicator_table.hpp"
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/inside_mpi_counter.hpp"
#include "commlens/profiler/rank_metadata.hpp"
#include "commlens/profiler/rank_records.hpp"
#include "commlens/profiler/thread_recorder.hpp"
#include "commlens/profiler/thread_registry.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace commlens {

class WriterThread;

class Profiler final : public RingDrainer {
public:
  // Where start() stores: this rank's file, or memory dropped at stop() (a rank of an MPI job whose
  // file could not be written still records, so that it issues the same collectives as the
  // ranks that could: communicator ids are agreed by collectives; nothing of it is kept).
  enum class Storage { RankFile, Discarded };
  // Opens <output>/rank-NNNNN.sqlite and starts the writer. On failure prints one message naming
  // the file and the reason and returns null: the application then runs unprofiled.
  // datatypes: names by EventRecord::datatype index (index 0, "no datatype", is not listed).
  static Profiler* start(Config config, ProcessIdentity identity, std::vector<FunctionDescription> functions,
                         std::vector<std::string> datatypes = {}, Storage storage = Storage::RankFile);
  static Profiler* active() noexcept { return active_.load(std::memory_order_acquire); }

  // Stores everything still buffered, closes the rank file and deactivates the profiler.
  // Returns the path of the rank file.
  std::string stop();
  // Synchronous flush of everything recorded so far (MPI_Abort, explicit checkpoints).
  void flush();

  // This thread's recorder, created on its first call; null when the thread limit is reached (the
  // call is then counted as dropped and must not be recorded).
  ThreadRecorder* thread_recorder() noexcept {
    // initial-exec: the library is preloaded, so its TLS is static and needs no __tls_get_addr
    // call (a measurable share of a 30 ns budget).
    struct ThreadSlot {
      const Profiler* owner;
      ThreadRecorder* recorder;
    };
    static thread_local ThreadSlot slot __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr};
    if (slot.owner != this || slot.recorder == nullptr) [[unlikely]] {
      slot.recorder = slot.owner == this ? refuse_thread() : register_thread();
      slot.owner = this;
    }
    return slot.recorder;
  }
  void wake_writer() noexcept override;
  // False once the writer has stopped for good: a full ring then drops (and counts) instead of waiting.
  bool writer_draining() const noexcept override;

  bool collecting() const noexcept { return collecting_.load(std::memory_order_relaxed); }
  void set_collecting(bool on) noexcept { collecting_.store(on, std::memory_order_relaxed); }
  std::uint16_t phase() const noexcept { return phase_.load(std::memory_order_relaxed); }
  // Ends the current phase and opens the next (MPI_Pcontrol); returns the new phase number.
  std::uint16_t begin_next_phase(int pcontrol_level);

  using Losses = RankLosses;
  // What this rank lost so far (ranks.dropped_events, ranks.summary_overflow); exact once stopped.
  Losses losses() const noexcept { return threads_.losses(); }

  InsideMpiCounter& inside_mpi() noexcept { return inside_mpi_; }
  CommunicatorTable& communicators() noexcept { return communicators_; }
  const TickConverter& clock() const noexcept { return clock_; }
  const Config& config() const noexcept { return config_; }
  const ProcessIdentity& identity() const noexcept { return identity_; }
  std::uint64_t init_ns() const noexcept { return init_ns_; }
  std::string rank_database_path() const;
  bool keeps_rank_file() const noexcept { return storage_ == Storage::RankFile; }
  std::string merged_database_path() const;

  void set_run_value(const std::string& key, const std::string& value);
  void set_clock_alignment(const ClockAlignment& alignment);
  void add_overhead(const std::string& component, std::uint64_t count, std::uint64_t time_ns,
                    std::optional<std::uint64_t> cpu_time_ns = std::nullopt);
  // Rows for a collector's own table (insert_sql with ? parameters, one vector per row), stored
  // by the writer at its next flush. For data arriving at thousands of rows a second (samples,
  // catalogues), not per-call events: it takes a lock. Times in rows are ns since MPI_Init
  // (relative_ns()), and the table's timestamp columns are listed in schema::kTableMerges.
  void store_rows(std::string insert_sql, std::vector<std::vector<SqlValue>> rows);
  std::int64_t relative_ns(std::uint64_t ticks) const noexcept {
    return static_cast<std::int64_t>(clock_.to_ns(ticks)) - static_cast<std::int64_t>(init_ns_);
  }

  ~Profiler();

private:
  Profiler(Config config, ProcessIdentity identity, std::vector<FunctionDescription> functions,
           std::vector<std::string> datatypes, Storage storage);
  ThreadRecorder* register_thread() noexcept;
  // The own-time meters' estimates (own_time.hpp) as profiler_overhead rows.
  void store_own_time();
  ThreadRecorder* refuse_thread() noexcept { return threads_.refuse_thread(); }

  static std::atomic<Profiler*> active_;

  Config config_;
  ProcessIdentity identity_;
  std::vector<FunctionDescription> functions_;
  std::vector<std::string> datatypes_;
  Storage storage_;
  TickConverter clock_;
  std::uint64_t init_ns_;
  std::atomic<bool> collecting_{true};
  std::atomic<std::uint16_t> phase_{0};

  ThreadRegistry threads_;
  InsideMpiCounter inside_mpi_;
  CommunicatorTable communicators_;
  RankMetadata metadata_; // phases, run values, alignment, overhead, collectors' rows

  std::unique_ptr<WriterThread> writer_;
};

} // namespace commlens
