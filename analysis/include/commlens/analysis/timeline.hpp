#pragma once
// Timeline queries for the viewer: the lanes (rank x thread) of a trace, and the calls of one lane in
// a time window at a level of detail. Calls narrower than the requested resolution are merged into
// bins, so a window over ten million calls comes back as a few thousand items to draw. Reads
// mpi_calls (trace mode); every function here returns empty results on a summary-mode database.
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
  std::uint64_t calls = 0; // rows of mpi_calls
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
  std::optional<std::int64_t> tag;
  std::optional<std::int64_t> comm_id;
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

// Reads the lanes and span with the merged file's (rank, start_ns) index: a few indexed look-ups
// per rank, never a scan of mpi_calls, so opening stays fast at any size.
TimelineExtent query_timeline_extent(const Database& database);

// Calls of `lane` overlapping [start_ns, end_ns). Calls shorter than `resolution_ns` go into bins
// at most `resolution_ns` wide. `cancel`, when set, stops the scan early (the result is partial).
TimelineWindow query_timeline_window(const Database& database, const TimelineLane& lane,
                                     std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns,
                                     const std::atomic<bool>* cancel = nullptr);

// The first call of `function_id` starting at or after `after_ns` on any lane, for "find next".
std::optional<std::pair<TimelineLane, TimelineCall>> query_next_call(const Database& database,
                                                                     int function_id, std::int64_t after_ns);

// id -> name of an enum table (functions, implementations, datatypes, buffer_locations).
std::map<int, std::string> query_enum_names(const Database& database, std::string_view table);

} // namespace commlens::analysis
