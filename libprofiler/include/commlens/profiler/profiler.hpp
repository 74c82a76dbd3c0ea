#pragma once
// The per-process profiler: owns the configuration, the clock, every thread's recorder, the
// communicator table and the writer thread that stores it all in this rank's SQLite file.
// Collectors call Profiler::active() on their hot path; it is null until start() succeeded.
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/communicator_table.hpp"
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/inside_mpi_counter.hpp"
#include "commlens/profiler/thread_recorder.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace commlens {

class WriterThread;

struct ProcessIdentity {
  int world_rank = 0; // in this job's MPI_COMM_WORLD
  int world_size = 1;
  std::string host;
  long pid = 0;
  // What the `rank` columns, rank file names and call ids hold: unique among the processes of
  // every job of the run (job_registry.hpp); equal to world_rank in the job mpirun started.
  int run_rank = world_rank;
  int job = 0;
  bool spawned = false;
  std::uint64_t mpi_init_ticks = 0; // now_ticks() on entering MPI_Init: time zero; 0 = at start()
  // CLOCK_MONOTONIC at the same instant (read_clocks()); the tick rate is then measured over
  // MPI_Init instead of by a 5 ms spin in start(). 0 = unknown.
  std::uint64_t mpi_init_ns = 0;
};

// Offset of this rank's clock from rank 0's, measured at finalize and carried back to init along
// the drift (docs/design.md). Both stay 0 in a rank that never finalized.
struct ClockAlignment {
  std::int64_t offset_ns = 0; // this rank's CLOCK_MONOTONIC minus rank 0's, at init
  double drift_ppb = 0.0;     // change of the offset per second, in ns
};

// One profiler_overhead row: what a component of the profiler cost this rank.
struct OverheadTotals {
  std::uint64_t count = 0;
  std::uint64_t time_ns = 0; // wall time
  // CPU time of the thread over the same spans, where measured: against time_ns it tells the
  // profiler's own work from waiting (for other ranks, or for a core when ranks oversubscribe).
  std::optional<std::uint64_t> cpu_time_ns;
};

// What EventRecord::tag_or_root holds for a function: the writer stores it in the tag or the root
// column (MPI_Pcontrol's level goes to tag).
enum class TagOrRoot : std::uint8_t { None, Tag, Root };

// One value of a collector's table row (NULL, integer, real, text).
using SqlValue = std::variant<std::monostate, std::int64_t, double, std::string>;

struct FunctionDescription {
  const char* name;   // "MPI_Send"
  const char* family; // "p2p", "collective", ...
  TagOrRoot tag_or_root = TagOrRoot::None;
};

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

  struct Losses {
    // Trace records dropped (pushed into a full ring after the writer stopped), calls of threads past
    // the thread limit. A full ring otherwise makes the calling thread wait: see trace_waits.
    std::uint64_t dropped_events = 0;
    std::uint64_t summary_overflow = 0; // calls no summary table could count
  };
  // What this rank lost so far (ranks.dropped_events, ranks.summary_overflow); exact once stopped.
  Losses losses() const noexcept;

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
  friend class WriterThread;
  struct Phase {
    std::uint16_t number;
    std::uint64_t start_ticks;
    std::uint64_t end_ticks; // 0 while open
    int pcontrol_level;      // -1 for phase 0
  };

  Profiler(Config config, ProcessIdentity identity, std::vector<FunctionDescription> functions,
           std::vector<std::string> datatypes, Storage storage);
  ThreadRecorder* register_thread() noexcept;
  ThreadRecorder* refuse_thread() noexcept {
    threads_refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

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

  std::array<std::atomic<ThreadRecorder*>, ThreadRecorder::kMaxThreads> threads_{};
  std::atomic<std::uint16_t> thread_count_{0};
  std::atomic<std::uint64_t> threads_refused_{0};
  InsideMpiCounter inside_mpi_;

  CommunicatorTable communicators_;

  // Rarely changed state the writer stores; guarded by metadata_mutex_.
  mutable std::mutex metadata_mutex_;
  std::map<std::string, std::string> run_values_;
  std::vector<Phase> phases_;
  ClockAlignment alignment_;
  std::map<std::string, OverheadTotals> overhead_;
  std::vector<std::pair<std::string, std::vector<std::vector<SqlValue>>>> pending_rows_;
  std::uint64_t metadata_version_ = 0;

  std::unique_ptr<WriterThread> writer_;
};

} // namespace commlens
