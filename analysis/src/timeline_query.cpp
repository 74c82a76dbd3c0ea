#include "commlens/analysis/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace commlens::analysis {
namespace {

constexpr std::string_view kCallColumns =
    "id, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag, comm_id, implementation, phase";
// Rows read between two looks at the cancel flag: often enough to stop within a moment.
constexpr std::uint64_t kRowsBetweenCancelChecks = 1 << 14;

TimelineCall read_call(const Statement& row, int first_column) {
  TimelineCall call;
  call.id = row.integer(first_column);
  call.function_id = static_cast<int>(row.integer(first_column + 1));
  call.start_ns = row.integer(first_column + 2);
  call.end_ns = row.integer(first_column + 3);
  call.bytes_sent = row.integer(first_column + 4);
  call.bytes_recv = row.integer(first_column + 5);
  call.peer = row.optional_integer(first_column + 6).value_or(-1);
  call.tag = row.optional_integer(first_column + 7);
  call.comm_id = row.optional_integer(first_column + 8);
  call.implementation = static_cast<int>(row.integer(first_column + 9));
  call.phase = static_cast<int>(row.integer(first_column + 10));
  return call;
}

std::vector<std::int64_t> threads_of_rank(const Database& database, int rank, std::int64_t recorded_threads) {
  // One calling thread is the common case; its id is read from a single indexed row instead of
  // scanning the rank's calls for distinct values.
  auto query =
      recorded_threads > 1
          ? database.prepare("SELECT DISTINCT thread FROM mpi_calls WHERE rank = ?1 ORDER BY thread")
          : database.prepare("SELECT thread FROM mpi_calls WHERE rank = ?1 ORDER BY start_ns LIMIT 1");
  query.bind(1, rank);
  std::vector<std::int64_t> threads;
  while (query.step())
    threads.push_back(query.integer(0));
  return threads;
}

// Merges sub-resolution calls into bins, keeping per-function busy time to name the dominant one.
class BinBuilder {
public:
  explicit BinBuilder(std::int64_t resolution_ns) : resolution_ns_(resolution_ns) {}

  bool accepts(const TimelineCall& call) const {
    return open_ && call.start_ns < current_.start_ns + resolution_ns_;
  }
  void start(const TimelineCall& call) {
    current_ = {.start_ns = call.start_ns, .end_ns = call.end_ns};
    open_ = true;
  }
  void add(const TimelineCall& call) {
    const auto duration = call.end_ns - call.start_ns;
    current_.end_ns = std::max(current_.end_ns, call.end_ns);
    current_.busy_ns += duration;
    ++current_.calls;
    const auto id = static_cast<std::size_t>(std::max(call.function_id, 0));
    if (id >= busy_by_function_.size())
      busy_by_function_.resize(id + 1, -1);
    if (busy_by_function_[id] < 0) {
      busy_by_function_[id] = 0;
      touched_functions_.push_back(static_cast<int>(id));
    }
    busy_by_function_[id] += duration + 1; // +1 so zero-length calls still vote
  }
  void close_into(std::vector<TimelineBin>& bins) {
    if (!open_)
      return;
    std::int64_t best = -1;
    for (const int id : touched_functions_) {
      if (busy_by_function_[id] > best) {
        best = busy_by_function_[id];
        current_.dominant_function_id = id;
      }
      busy_by_function_[id] = -1;
    }
    touched_functions_.clear();
    bins.push_back(current_);
    open_ = false;
  }

private:
  std::int64_t resolution_ns_;
  TimelineBin current_;
  bool open_ = false;
  std::vector<std::int64_t> busy_by_function_; // -1: not in the current bin
  std::vector<int> touched_functions_;
};

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
  auto ranks = database.prepare("SELECT rank, coalesce(threads, 1) FROM ranks ORDER BY rank");
  bool any = false;
  while (ranks.step()) {
    const int rank = static_cast<int>(ranks.integer(0));
    auto first_call =
        database.prepare("SELECT start_ns FROM mpi_calls WHERE rank = ?1 ORDER BY start_ns LIMIT 1");
    first_call.bind(1, rank);
    if (!first_call.step())
      continue;
    // The call that starts last ends last unless another thread of the rank is still inside a
    // longer one; that rare case at worst clips the end of the initial view.
    auto last_call =
        database.prepare("SELECT end_ns FROM mpi_calls WHERE rank = ?1 ORDER BY start_ns DESC LIMIT 1");
    last_call.bind(1, rank);
    last_call.step();
    const auto start = first_call.integer(0), end = last_call.integer(0);
    extent.start_ns = any ? std::min(extent.start_ns, start) : start;
    extent.end_ns = any ? std::max(extent.end_ns, end) : end;
    any = true;
    for (const auto thread : threads_of_rank(database, rank, ranks.integer(1)))
      extent.lanes.push_back({rank, thread});
  }
  auto count = database.prepare("SELECT count(*) FROM mpi_calls");
  count.step();
  extent.calls = static_cast<std::uint64_t>(count.integer(0));
  return extent;
}

TimelineWindow query_timeline_window(const Database& database, const TimelineLane& lane,
                                     std::int64_t start_ns, std::int64_t end_ns, std::int64_t resolution_ns,
                                     const std::atomic<bool>* cancel) {
  TimelineWindow window;
  if (!database.has_table("mpi_calls") || end_ns <= start_ns)
    return window;
  resolution_ns = std::max<std::int64_t>(resolution_ns, 1);
  BinBuilder bins(resolution_ns);
  const auto take = [&](const TimelineCall& call) {
    if (call.end_ns - call.start_ns >= resolution_ns) {
      bins.close_into(window.bins);
      window.calls.push_back(call);
      return;
    }
    if (!bins.accepts(call)) {
      bins.close_into(window.bins);
      bins.start(call);
    }
    bins.add(call);
  };

  // Calls on one thread do not overlap, so at most one call that started before the window reaches
  // into it: the thread's last call before start_ns.
  auto carried_in = database.prepare(fmt::format("SELECT {} FROM mpi_calls WHERE rank = ?1 AND thread = ?2 "
                                                 "AND start_ns < ?3 ORDER BY start_ns DESC LIMIT 1",
                                                 kCallColumns));
  carried_in.bind(1, lane.rank).bind(2, lane.thread).bind(3, start_ns);
  if (carried_in.step()) {
    const auto call = read_call(carried_in, 0);
    if (call.end_ns > start_ns)
      take(call);
  }

  auto in_window = database.prepare(fmt::format("SELECT {} FROM mpi_calls WHERE rank = ?1 AND start_ns >= ?3 "
                                                "AND start_ns < ?4 AND thread = ?2 ORDER BY start_ns",
                                                kCallColumns));
  in_window.bind(1, lane.rank).bind(2, lane.thread).bind(3, start_ns).bind(4, end_ns);
  std::uint64_t rows = 0;
  while (in_window.step()) {
    take(read_call(in_window, 0));
    if (cancel && ++rows % kRowsBetweenCancelChecks == 0 && cancel->load(std::memory_order_relaxed))
      break;
  }
  bins.close_into(window.bins);
  return window;
}

std::optional<std::pair<TimelineLane, TimelineCall>> query_next_call(const Database& database,
                                                                     int function_id, std::int64_t after_ns) {
  if (!database.has_table("mpi_calls"))
    return std::nullopt;
  auto query = database.prepare(fmt::format("SELECT rank, thread, {} FROM mpi_calls WHERE function_id = ?1 "
                                            "AND start_ns >= ?2 ORDER BY start_ns LIMIT 1",
                                            kCallColumns));
  query.bind(1, function_id).bind(2, after_ns);
  if (!query.step())
    return std::nullopt;
  return std::pair{TimelineLane{static_cast<int>(query.integer(0)), query.integer(1)}, read_call(query, 2)};
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

} // namespace commlens::analysis
