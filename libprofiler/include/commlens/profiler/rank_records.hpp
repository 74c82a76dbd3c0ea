#pragma once
// The plain values a rank's profiler hands to its file: who the process is, which functions it
// records, its clock alignment, the profiler's own overhead and collectors' row values. The
// profiler, the writer, the rank store and the merge share them without depending on each other.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace commlens {

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

} // namespace commlens
