#include "commlens/analysis/timeline.hpp"

#include "gpu/copy_timing.hpp"
#include "timeline_bins.hpp"
#include "timeline_call_rows.hpp"
#include "timeline_tile_query.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace commlens::analysis {
namespace {

// Rows read between two looks at the cancel flag: often enough to stop within a moment.
constexpr std::uint64_t kRowsBetweenCancelChecks = 1 << 14;

// Statement has no nullable text getter: queries select `column IS NULL` next to the column.
std::optional<std::string> nullable_text(const Statement& row, int is_null_column, int text_column) {
  if (row.integer(is_null_column) != 0)
    return std::nullopt;
  return row.text(text_column);
}

// Every call of the lane in the window: the path for windows a few calls per pixel wide, and for
// files without level-of-detail tiles.
TimelineWindow query_window_from_calls(const Database& database, const TimelineLane& lane,
                                       std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns,
                                       const std::atomic<bool>* cancel) {
  TimelineWindow window;
  BinBuilder bins(resolution_ns);
  const auto take = [&](const TimelineCall& call) {
    if (call.end_ns - call.start_ns >= resolution_ns) {
      bins.close_into(window.bins);
      window.calls.push_back(call);
      return;
    }
    bins.add({call.start_ns, call.end_ns, 1, call.end_ns - call.start_ns, call.function_id}, window.bins);
  };

  if (const auto carried_in = call_running_at(database, lane, start_ns))
    take(*carried_in);

  // Call ids number each thread's calls in order (rank << 46 | thread << 36 | sequence, see
  // docs/schema.md), and calls on one thread do not overlap: from the window's first call, the
  // lane's calls follow in rowid order. The first one is found by a binary search over the lane's
  // ids (call_lanes.hpp); reading the rest by rowid walks the table in storage order.
  CallLaneProbe probe(database);
  const auto lane_ids = call_lanes::lane_ids(lane.rank, lane.thread);
  const auto first_in_window = call_lanes::first_call_from(probe, lane_ids, start_ns);
  const bool any_in_window = first_in_window && first_in_window->start_ns < end_ns;
  // Most calls of a wide window only go into a bin: the scan reads the three columns a bin needs,
  // and the rest by id only for calls drawn on their own.
  auto in_window = database.prepare(
      "SELECT id, function_id, start_ns, end_ns FROM mpi_calls WHERE id >= ?1 AND id < ?2 ORDER BY id");
  in_window.bind(1, any_in_window ? first_in_window->id : lane_ids.end).bind(2, lane_ids.end);
  CallsById calls_by_id(database);
  std::uint64_t rows = 0;
  while (in_window.step()) {
    TimelineCall call{.function_id = static_cast<int>(in_window.integer(1)),
                      .start_ns = in_window.integer(2),
                      .end_ns = in_window.integer(3)};
    if (call.start_ns >= end_ns)
      break;
    const auto drawn =
        call.end_ns - call.start_ns >= resolution_ns ? calls_by_id.find(in_window.integer(0)) : std::nullopt;
    take(drawn ? *drawn : call);
    if (cancel && ++rows % kRowsBetweenCancelChecks == 0 && cancel->load(std::memory_order_relaxed))
      break;
  }
  bins.close_into(window.bins);
  return window;
}

// The coarsest level of the level-of-detail tiles counts every call once in a few hundred rows;
// counting mpi_calls itself reads the whole table (0.15 s at 10 M calls, on every open).
std::uint64_t count_traced_calls(const Database& database) {
  if (database.has_table("timeline_tiles") && database.has_table("timeline_tile_levels")) {
    auto tiles = database.prepare("SELECT SUM(calls) FROM timeline_tiles WHERE level = "
                                  "(SELECT MAX(level) FROM timeline_tile_levels)");
    if (tiles.step())
      if (const auto calls = tiles.optional_integer(0))
        return static_cast<std::uint64_t>(*calls);
  }
  auto count = database.prepare("SELECT count(*) FROM mpi_calls");
  count.step();
  return static_cast<std::uint64_t>(count.integer(0));
}

} // namespace

std::uint64_t TimelineWindow::total_calls() const {
  std::uint64_t total = calls.size();
  for (const auto& bin : bins)
    total += bin.calls;
  return total;
}

TimelineExtent query_timeline_extent(const Database& database) {
  TimelineExtent extent;
  if (!database.has_table("mpi_calls"))
    return extent;
  auto ranks = database.prepare("SELECT rank FROM ranks ORDER BY rank");
  CallLaneProbe probe(database);
  bool any = false;
  while (ranks.step()) {
    const int rank = static_cast<int>(ranks.integer(0));
    const auto span = call_lanes::rank_span(probe, rank);
    if (!span)
      continue;
    extent.start_ns = any ? std::min(extent.start_ns, span->start_ns) : span->start_ns;
    extent.end_ns = any ? std::max(extent.end_ns, span->end_ns) : span->end_ns;
    any = true;
    for (const auto thread : call_lanes::threads_of_rank(probe, rank))
      extent.lanes.push_back({rank, thread});
  }
  extent.calls = count_traced_calls(database);
  extent.has_ranges = database.has_rows("nvtx_ranges");
  return extent;
}

std::optional<TimelineTileLevel> query_timeline_tile_level(const Database& database,
                                                           std::int64_t resolution_ns) {
  if (!database.has_table("timeline_tile_levels"))
    return std::nullopt;
  auto query = database.prepare(
      "SELECT level, tile_ns FROM timeline_tile_levels WHERE tile_ns <= ?1 ORDER BY tile_ns DESC LIMIT 1");
  query.bind(1, resolution_ns);
  if (!query.step())
    return std::nullopt;
  return TimelineTileLevel{static_cast<int>(query.integer(0)), query.integer(1)};
}

TimelineWindow query_timeline_window(const Database& database, const TimelineLane& lane,
                                     std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns,
                                     const std::atomic<bool>* cancel) {
  if (!database.has_table("mpi_calls") || end_ns <= start_ns)
    return {};
  resolution_ns = std::max<std::int64_t>(resolution_ns, 1);
  if (const auto level = query_timeline_tile_level(database, resolution_ns))
    return query_tiled_window(database, lane, start_ns, end_ns, resolution_ns, *level, cancel);
  return query_window_from_calls(database, lane, start_ns, end_ns, resolution_ns, cancel);
}

std::optional<double> TimelineCopy::gb_per_s() const {
  if (end_ns <= start_ns)
    return std::nullopt;
  return static_cast<double>(bytes) / static_cast<double>(end_ns - start_ns);
}

std::string host_memory_of(std::string_view direction, const std::string& src_kind,
                           const std::string& dst_kind) {
  if (direction.starts_with("Hto"))
    return src_kind;
  if (direction.ends_with("toH"))
    return dst_kind;
  return {};
}

CopyRoute TimelineCopy::route() const {
  return {path, link, copy_kind, host_memory_of(copy_kind, src_kind, dst_kind)};
}

std::vector<TimelineCopy> query_timeline_copies(const Database& database, int rank, std::int64_t start_ns,
                                                std::int64_t end_ns) {
  std::vector<TimelineCopy> copies;
  if (!database.has_table("cuda_copies") || end_ns <= start_ns)
    return copies;
  // Copies on several streams overlap, so unlike calls the window needs the full overlap test.
  const bool runtime_ids = database.has_column("cuda_copies", "runtime_correlation_id");
  auto query = database.prepare(
      std::string("SELECT rowid, start_ns, end_ns, device, src_device, dst_device, bytes, copy_kind, path, "
                  "link IS NULL, link, mpi_call_id, stream, src_kind, dst_kind, correlation_id, ") +
      (runtime_ids ? "runtime_correlation_id" : "NULL") +
      " FROM cuda_copies WHERE rank = ?1 AND start_ns < ?3 AND end_ns > ?2 AND " +
      detail::copy_gpu_timed(database) + " ORDER BY start_ns");
  query.bind(1, rank).bind(2, start_ns).bind(3, end_ns);
  while (query.step()) {
    const auto src = query.optional_integer(4), dst = query.optional_integer(5);
    copies.push_back({.id = query.integer(0),
                      .start_ns = query.integer(1),
                      .end_ns = query.integer(2),
                      .device = static_cast<int>(query.integer(3)),
                      .src_device = src ? std::optional<int>(static_cast<int>(*src)) : std::nullopt,
                      .dst_device = dst ? std::optional<int>(static_cast<int>(*dst)) : std::nullopt,
                      .bytes = query.integer(6),
                      .stream = query.integer(12),
                      .src_kind = query.text(13),
                      .dst_kind = query.text(14),
                      .copy_kind = query.text(7),
                      .path = query.text(8),
                      .link = nullable_text(query, 9, 10),
                      .mpi_call_id = query.optional_integer(11),
                      .correlation_id = query.integer(15),
                      .runtime_correlation_id = query.optional_integer(16)});
  }
  return copies;
}

std::vector<TimelineRange> query_timeline_ranges(const Database& database, int rank, std::int64_t start_ns,
                                                 std::int64_t end_ns) {
  std::vector<TimelineRange> ranges;
  if (!database.has_table("nvtx_ranges") || end_ns <= start_ns)
    return ranges;
  // Longer first among equal starts, so an enclosing range precedes the ranges it contains.
  auto query =
      database.prepare("SELECT start_ns, end_ns, domain IS NULL, domain, coalesce(name, '') FROM nvtx_ranges "
                       "WHERE rank = ?1 AND start_ns < ?3 AND end_ns > ?2 ORDER BY start_ns, end_ns DESC");
  query.bind(1, rank).bind(2, start_ns).bind(3, end_ns);
  std::vector<std::int64_t> open_ends; // ends of the ranges enclosing the current one, innermost last
  while (query.step()) {
    TimelineRange range{query.integer(0), query.integer(1), nullable_text(query, 2, 3), query.text(4)};
    while (!open_ends.empty() && open_ends.back() <= range.start_ns)
      open_ends.pop_back();
    range.depth = static_cast<int>(open_ends.size());
    open_ends.push_back(range.end_ns);
    ranges.push_back(std::move(range));
  }
  return ranges;
}

std::vector<TimelinePhase> query_timeline_phases(const Database& database) {
  std::vector<TimelinePhase> phases;
  if (!database.has_table("phases"))
    return phases;
  // Files written before phases had levels have no such column.
  auto query = database.prepare(
      fmt::format("SELECT rank, phase, start_ns, end_ns, {} FROM phases ORDER BY rank, phase",
                  database.has_column("phases", "pcontrol_level") ? "pcontrol_level" : "NULL"));
  while (query.step()) {
    const auto level = query.optional_integer(4);
    phases.push_back({static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                      query.integer(2), query.optional_integer(3),
                      level ? std::optional<int>(static_cast<int>(*level)) : std::nullopt});
  }
  return phases;
}

std::optional<std::pair<TimelineLane, TimelineCall>> query_next_call(const Database& database,
                                                                     int function_id, std::int64_t after_ns) {
  if (!database.has_table("mpi_calls"))
    return std::nullopt;
  // Lane by lane: seek the lane's first call at or after `after_ns` (call_lanes.hpp), then read on
  // in id order, which is the lane's time order, to its first call of the function.
  CallLaneProbe probe(database);
  auto next_in_lane = database.prepare(fmt::format(
      "SELECT {} FROM mpi_calls WHERE id >= ?1 AND id < ?2 AND function_id = ?3 ORDER BY id LIMIT 1",
      kCallColumns));
  auto ranks = database.prepare("SELECT rank FROM ranks ORDER BY rank");
  std::optional<std::pair<TimelineLane, TimelineCall>> next;
  while (ranks.step()) {
    const int rank = static_cast<int>(ranks.integer(0));
    for (const auto thread : call_lanes::threads_of_rank(probe, rank)) {
      const auto lane = call_lanes::lane_ids(rank, thread);
      const auto from = call_lanes::first_call_from(probe, lane, after_ns);
      if (!from || (next && from->start_ns >= next->second.start_ns))
        continue;
      next_in_lane.reset();
      next_in_lane.bind(1, from->id).bind(2, lane.end).bind(3, function_id);
      if (!next_in_lane.step())
        continue;
      const TimelineCall call = read_call(next_in_lane, 0);
      if (!next || call.start_ns < next->second.start_ns)
        next = std::pair{TimelineLane{rank, thread}, call};
    }
  }
  return next;
}

std::map<int, std::string> query_enum_names(const Database& database, std::string_view table) {
  std::map<int, std::string> names;
  if (!database.has_table(table))
    return names;
  // The table name is checked against sqlite_master by has_table, so quoting it is enough.
  auto query = database.prepare(fmt::format("SELECT id, name FROM \"{}\"", table));
  while (query.step())
    names[static_cast<int>(query.integer(0))] = query.text(1);
  return names;
}

std::map<int, std::string> query_function_families(const Database& database) {
  std::map<int, std::string> families;
  if (!database.has_column("functions", "family"))
    return families;
  auto query = database.prepare("SELECT id, family FROM functions");
  while (query.step())
    families[static_cast<int>(query.integer(0))] = query.text(1);
  return families;
}

} // namespace commlens::analysis
