// The NCCL side tables nccl_calls and nccl_call_stats (nccl_call_details.hpp).
#include "nccl_call_details.hpp"

#include "commlens/profiler/summary_table.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace commlens::nccl {
namespace {

constexpr std::size_t kRowsPerBatch = 4096;

struct StatsKey {
  FunctionId function;
  std::uint16_t phase;
  std::int16_t size_bin;
  std::int64_t comm_id;
  NcclCallDetails details;
  bool operator==(const StatsKey& other) const noexcept {
    const NcclCallDetails &a = details, &b = other.details;
    return function == other.function && phase == other.phase && size_bin == other.size_bin &&
           comm_id == other.comm_id && a.datatype == b.datatype && a.op == b.op && a.stream == b.stream &&
           a.root == b.root && a.peer == b.peer && a.group_depth == b.group_depth;
  }
};

struct StatsKeyHash {
  std::size_t operator()(const StatsKey& key) const noexcept {
    std::uint64_t hash = key.function;
    for (const std::uint64_t part :
         {std::uint64_t{key.phase}, std::uint64_t(std::uint16_t(key.size_bin)), std::uint64_t(key.comm_id),
          std::uint64_t(std::uint32_t(key.details.datatype)), std::uint64_t(std::uint32_t(key.details.op)),
          std::uint64_t(key.details.stream), std::uint64_t(std::uint32_t(key.details.root)),
          std::uint64_t(std::uint32_t(key.details.peer)),
          std::uint64_t(std::uint32_t(key.details.group_depth))}) {
      hash = (hash ^ part) * 1099511628211ull;
    }
    return hash;
  }
};

struct Stats {
  std::uint64_t count = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
  std::uint64_t ticks_total = 0;
  std::uint64_t ticks_min = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t ticks_max = 0;
};

struct ThreadDetails {
  std::mutex mutex; // the owner on every call, the final flush once
  std::vector<NcclCallFields> rows;
  std::unordered_map<StatsKey, Stats, StatsKeyHash> stats;
};

struct DetailsRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadDetails>> threads; // kept after a thread ends: flushed at finish
};

DetailsRegistry& details_registry() {
  static auto* instance = new DetailsRegistry; // never destroyed: calls may come during exit
  return *instance;
}

ThreadDetails& this_thread() {
  static thread_local ThreadDetails* mine = nullptr;
  if (mine == nullptr) [[unlikely]] {
    auto owned = std::make_unique<ThreadDetails>();
    owned->rows.reserve(kRowsPerBatch);
    mine = owned.get();
    const std::lock_guard lock(details_registry().mutex);
    details_registry().threads.push_back(std::move(owned));
  }
  return *mine;
}

SqlValue optional_value(std::int64_t value, std::int64_t none) {
  return value == none ? SqlValue{} : SqlValue{value};
}

// Appends the detail columns (datatype, op, stream, root, peer, group_depth) to a row.
void append_details(std::vector<SqlValue>& row, const NcclCallDetails& details) {
  row.push_back(optional_value(details.datatype, NcclCallDetails::kNone));
  row.push_back(optional_value(details.op, NcclCallDetails::kNone));
  row.push_back(optional_value(details.stream, NcclCallDetails::kNoStream));
  row.push_back(optional_value(details.root, NcclCallDetails::kNone));
  row.push_back(optional_value(details.peer, NcclCallDetails::kNone));
  row.emplace_back(std::int64_t{details.group_depth});
}

// One SQLite row per call would cost the writer more than the call itself: the batch goes as one
// chunk, bound as text and stored as the BLOB of its bytes.
void store_call_rows(Profiler& profiler, std::vector<NcclCallFields>& rows) {
  if (rows.empty()) {
    return;
  }
  std::string chunk;
  encode_nccl_calls(rows, chunk);
  rows.clear();
  std::vector<std::vector<SqlValue>> values(1);
  values.front().emplace_back(std::move(chunk));
  profiler.store_rows("INSERT INTO nccl_call_chunks (data) VALUES (CAST(? AS BLOB))", std::move(values));
}

void store_stats(Profiler& profiler, std::unordered_map<StatsKey, Stats, StatsKeyHash>& stats) {
  if (stats.empty()) {
    return;
  }
  const std::int64_t rank = profiler.identity().run_rank;
  const TickConverter& clock = profiler.clock();
  const auto ns = [&clock](std::uint64_t ticks) {
    return static_cast<std::int64_t>(clock.duration_ns(ticks));
  };
  std::vector<std::vector<SqlValue>> values;
  values.reserve(stats.size());
  for (const auto& [key, entry] : stats) {
    std::vector<SqlValue> columns{rank, std::int64_t{key.function}, key.comm_id, std::int64_t{key.size_bin},
                                  std::int64_t{key.phase}};
    append_details(columns, key.details);
    for (const std::int64_t value :
         {static_cast<std::int64_t>(entry.count), static_cast<std::int64_t>(entry.bytes_sent),
          static_cast<std::int64_t>(entry.bytes_recv), ns(entry.ticks_total), ns(entry.ticks_min),
          ns(entry.ticks_max)}) {
      columns.emplace_back(value);
    }
    values.push_back(std::move(columns));
  }
  stats.clear();
  profiler.store_rows(
      "INSERT INTO nccl_call_stats (rank, function_id, comm_id, size_bin, phase, datatype, op, "
      "stream, root, peer, group_depth, count, bytes_sent, bytes_recv, time_total_ns, "
      "time_min_ns, time_max_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      std::move(values));
}

} // namespace

void store_call_details(pmpi::CallRecording& call, const NcclCallDetails& details) noexcept {
  Profiler& profiler = call.profiler();
  const EventRecord& event = call.event();
  // Call id 0: a thread past the recorder limit, whose calls are not recorded either.
  if (event.call_id == 0 || !profiler.collecting()) {
    return;
  }
  const std::uint64_t ticks = event.end_ticks - event.start_ticks;
  const pmpi::CommunicatorEntry* communicator = call.communicator();
  const StatsKey key{event.function, profiler.phase(),
                     static_cast<std::int16_t>(size_bin_of(std::max(event.bytes_sent, event.bytes_recv))),
                     communicator != nullptr ? communicator->id : -1, details};
  ThreadDetails& mine = this_thread();
  std::vector<NcclCallFields> full;
  {
    const std::lock_guard lock(mine.mutex);
    Stats& stats = mine.stats[key];
    ++stats.count;
    stats.bytes_sent += event.bytes_sent;
    stats.bytes_recv += event.bytes_recv;
    stats.ticks_total += ticks;
    stats.ticks_min = std::min(stats.ticks_min, ticks);
    stats.ticks_max = std::max(stats.ticks_max, ticks);
    if (profiler.config().mode == Mode::Trace) {
      mine.rows.push_back({event.call_id, details});
      if (mine.rows.size() >= kRowsPerBatch) {
        full.swap(mine.rows);
        mine.rows.reserve(kRowsPerBatch);
      }
    }
  }
  store_call_rows(profiler, full); // outside the thread's lock: it takes the profiler's
}

void flush_call_details(Profiler& profiler) {
  const std::lock_guard registry_lock(details_registry().mutex);
  for (const auto& thread : details_registry().threads) {
    const std::lock_guard lock(thread->mutex);
    store_call_rows(profiler, thread->rows);
    store_stats(profiler, thread->stats);
  }
}

} // namespace commlens::nccl
