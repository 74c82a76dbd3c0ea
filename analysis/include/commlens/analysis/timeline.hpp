#pragma once
// Timeline queries for the viewer: the lanes (rank x thread) of a trace, and the calls of one lane in
// a time window at a level of detail. Calls narrower than the requested resolution are merged into
// bins, so a window over ten million calls comes back as a few thousand items to draw. Reads
// mpi_calls (trace mode), and for windows far wider than a call the merged file's level-of-detail
// table timeline_tiles (docs/timeline-lod.md); every function here returns empty results on a
// summary-mode database.
// CUDA copies, NVTX ranges and MPI_Pcontrol phases come from their own tables (any mode), read per
// rank and window.
#include "commlens/analysis/database.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace commlens::analysis {

struct TimelineLane {
  int rank = 0;
  std::int64_t thread = 0;
  auto operator<=>(const TimelineLane&) const = default;
};

// Every lane with at least one traced call, ascending, and the time span they cover.
struct TimelineExtent {
  std::vector<TimelineLane> lanes;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t calls = 0; // rows of mpi_calls (from the level-of-detail tiles where the file has them)
  bool has_ranges = false; // nvtx_ranges has rows
};

// One call, wide enough to draw on its own.
struct TimelineCall {
  std::int64_t id = 0;
  int function_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_recv = 0;
  std::int64_t peer = -1;
  std::optional<std::int64_t> tag{};
  std::optional<std::int64_t> comm_id{};
  int implementation = 0;
  int phase = 0;
};

// Consecutive calls each narrower than the resolution, merged: drawn as one block whose colour is
// the function with the most time in it and whose height shows how busy the span was.
struct TimelineBin {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t calls = 0;
  std::int64_t busy_ns = 0;
  int dominant_function_id = 0;
};

struct TimelineWindow {
  std::vector<TimelineCall> calls; // ascending start
  std::vector<TimelineBin> bins;   // ascending start
  std::uint64_t total_calls() const;
};

// Where copies went: their path (docs/schema.md) and link, their direction as CUPTI names it
// (HtoD, DtoH, DtoD, PtoP, HtoH) and, for a copy to or from the host, the host memory's kind
// (pageable or pinned: a pageable copy is staged by the driver and runs slower). Empty host_memory
// for copies between devices.
struct CopyRoute {
  std::string path;
  std::optional<std::string> link; // nvlink or pcie for peer and ipc copies
  std::string direction;
  std::string host_memory;
  auto operator<=>(const CopyRoute&) const = default;
};

// The host side of a copy: src_kind for HtoD and HtoH, dst_kind for DtoH; empty otherwise.
std::string host_memory_of(std::string_view direction, const std::string& src_kind,
                           const std::string& dst_kind);

// One row of cuda_copies (see docs/schema.md).
struct TimelineCopy {
  std::int64_t id = 0; // rowid
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int device = 0;
  std::optional<int> src_device;
  std::optional<int> dst_device;
  std::int64_t bytes = 0;
  std::int64_t stream = 0; // CUPTI's stream id
  std::string src_kind;    // pageable, pinned, device, managed, ...
  std::string dst_kind;
  std::string copy_kind;
  std::string path;
  std::optional<std::string> link;
  std::optional<std::int64_t> mpi_call_id;
  // CUPTI's: those of the driver API call that made it and of the runtime API call around that
  // (empty when there was none, and in files written before the column existed).
  std::int64_t correlation_id = 0;
  std::optional<std::int64_t> runtime_correlation_id;
  // bytes / duration in GB/s (= bytes per ns); empty for a zero-length copy.
  std::optional<double> gb_per_s() const;
  CopyRoute route() const;
};

// One row of nvtx_ranges; `depth` is its nesting level among the rank's ranges (0: outermost), so
// nested push/pop ranges can be stacked.
struct TimelineRange {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::string> domain; // empty: the default domain
  std::string name;
  int depth = 0;
};

// One row of phases: an MPI_Pcontrol phase of one rank; `end_ns` is empty while it was left open.
struct TimelinePhase {
  int rank = 0;
  int phase = 0;
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;
  std::optional<int> level; // the MPI_Pcontrol level that opened it (2: a step); empty for phase 0
};

// A level of the level-of-detail table: tile t covers [t * tile_ns, (t + 1) * tile_ns).
struct TimelineTileLevel {
  int level = 0;
  std::int64_t tile_ns = 0;
};

// The level query_timeline_window reads at `resolution_ns`: the coarsest whose tiles are at most
// that wide. Empty when the resolution is finer than the finest level, or the file has no tiles
// (merged by an older commlens, or without traced calls): the window is then read from mpi_calls.
std::optional<TimelineTileLevel> query_timeline_tile_level(const Database& database,
                                                           std::int64_t resolution_ns);

// Reads the lanes and span with the merged file's (rank, start_ns) index: a few indexed look-ups
// per rank, never a scan of mpi_calls, so opening stays fast at any size.
TimelineExtent query_timeline_extent(const Database& database);

// Calls of `lane` overlapping [start_ns, end_ns). Calls shorter than `resolution_ns` go into bins
// about `resolution_ns` wide. `cancel`, when set, stops the scan early (the result is partial).
// With a tile level for the resolution each bin is a tile (between a quarter of `resolution_ns`
// and all of it wide, starting on a tile edge): it counts the calls starting in it and holds the
// busy time inside it. Otherwise each bin starts at its first call and is less than
// `resolution_ns` wide. Calls drawn on their own are the same either way.
TimelineWindow query_timeline_window(const Database& database, const TimelineLane& lane,
                                     std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns,
                                     const std::atomic<bool>* cancel = nullptr);

// Copies of `rank` overlapping [start_ns, end_ns), ascending start. Every stored row in the window
// comes back: copies are few next to MPI calls (one per staged transfer chunk at most).
std::vector<TimelineCopy> query_timeline_copies(const Database& database, int rank, std::int64_t start_ns,
                                                std::int64_t end_ns);

// NVTX ranges of `rank` overlapping [start_ns, end_ns), ascending start, with their nesting depth
// computed over the window's rows.
std::vector<TimelineRange> query_timeline_ranges(const Database& database, int rank, std::int64_t start_ns,
                                                 std::int64_t end_ns);

// Every rank's phases, by rank then phase (the table is a few rows per rank).
std::vector<TimelinePhase> query_timeline_phases(const Database& database);

// The first call of `function_id` starting at or after `after_ns` on any lane, for "find next".
std::optional<std::pair<TimelineLane, TimelineCall>> query_next_call(const Database& database,
                                                                     int function_id, std::int64_t after_ns);

// id -> name of an enum table (functions, implementations, datatypes, buffer_locations).
std::map<int, std::string> query_enum_names(const Database& database, std::string_view table);
// Function id -> its family (p2p, collective, completion, lifecycle, communicator, nccl_collective,
// nccl_p2p, nccl_communicator, ...: docs/schema.md); empty for files without the column.
std::map<int, std::string> query_function_families(const Database& database);

} // namespace commlens::analysis
