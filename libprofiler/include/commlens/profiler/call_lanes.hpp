#pragma once
// Time seeks in mpi_calls without an index. A call id is rank << 46 | thread << 36 | sequence, and
// calls on one thread do not overlap, so a lane's (rank, thread) calls are one id range in time
// order: the first call at or after a time is found by a binary search over ids, each step one
// rowid seek. Both the merge (timeline tiles) and the query layer use these with their own
// statement types, through a probe:
//   probe(from_id, to_id, newest) -> std::optional<LaneCall>
// the call of smallest id (largest with newest) in [from_id, to_id), if any.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace commlens::call_lanes {

inline constexpr int kRankShift = 46;
inline constexpr int kThreadShift = 36;

struct LaneCall {
  std::int64_t id = 0, start_ns = 0, end_ns = 0;
};

// The probe's statement, on mpi_calls (or any table with these columns and id as its rowid).
inline constexpr const char* kProbeOldestSql =
    "SELECT id, start_ns, end_ns FROM mpi_calls WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 1";
inline constexpr const char* kProbeNewestSql =
    "SELECT id, start_ns, end_ns FROM mpi_calls WHERE id >= ?1 AND id < ?2 ORDER BY id DESC LIMIT 1";

struct IdRange {
  std::int64_t begin = 0, end = 0; // [begin, end)
};

inline IdRange rank_ids(std::int64_t rank) {
  return {rank << kRankShift, (rank + 1) << kRankShift};
}
inline IdRange lane_ids(std::int64_t rank, std::int64_t thread) {
  const std::int64_t begin = rank << kRankShift | thread << kThreadShift;
  return {begin, begin + (std::int64_t{1} << kThreadShift)};
}
inline std::int64_t thread_of(std::int64_t id) {
  return (id >> kThreadShift) & ((std::int64_t{1} << (kRankShift - kThreadShift)) - 1);
}

// The threads of a rank that have calls, in order: one seek per thread.
template <typename Probe> std::vector<std::int64_t> threads_of_rank(Probe&& probe, std::int64_t rank) {
  std::vector<std::int64_t> threads;
  const IdRange ids = rank_ids(rank);
  for (std::int64_t from = ids.begin; from < ids.end;) {
    const std::optional<LaneCall> call = probe(from, ids.end, false);
    if (!call)
      break;
    threads.push_back(thread_of(call->id));
    from = lane_ids(rank, threads.back()).end;
  }
  return threads;
}

// The lane's first call starting at or after time_ns.
template <typename Probe>
std::optional<LaneCall> first_call_from(Probe&& probe, IdRange lane, std::int64_t time_ns) {
  std::optional<LaneCall> found; // the earliest call known to start at or after time_ns
  std::int64_t low = lane.begin, high = lane.end;
  while (low < high) {
    const std::int64_t middle = low + (high - low) / 2;
    const std::optional<LaneCall> call = probe(middle, high, false);
    if (call && call->start_ns < time_ns) {
      low = call->id + 1; // every call up to this one starts earlier
    } else {
      if (call)
        found = call; // ids in [middle, call->id) hold no call
      high = middle;
    }
  }
  return found;
}

// The lane's last call starting before time_ns.
template <typename Probe>
std::optional<LaneCall> last_call_before(Probe&& probe, IdRange lane, std::int64_t time_ns) {
  const std::optional<LaneCall> next = first_call_from(probe, lane, time_ns);
  return probe(lane.begin, next ? next->id : lane.end, true);
}

// When a rank's calls begin (the earliest start) and end (the end of the call that starts last;
// another thread still inside a longer call is missed, as the index-based query missed it).
struct RankSpan {
  std::int64_t start_ns = 0, end_ns = 0;
};
template <typename Probe> std::optional<RankSpan> rank_span(Probe&& probe, std::int64_t rank) {
  std::optional<RankSpan> span;
  std::int64_t last_start = 0;
  for (const std::int64_t thread : threads_of_rank(probe, rank)) {
    const IdRange lane = lane_ids(rank, thread);
    const std::optional<LaneCall> first = probe(lane.begin, lane.end, false);
    const std::optional<LaneCall> last = probe(lane.begin, lane.end, true);
    if (!first || !last)
      continue;
    if (!span) {
      span = RankSpan{first->start_ns, last->end_ns};
      last_start = last->start_ns;
      continue;
    }
    span->start_ns = std::min(span->start_ns, first->start_ns);
    if (last->start_ns > last_start) {
      last_start = last->start_ns;
      span->end_ns = last->end_ns;
    }
  }
  return span;
}

} // namespace commlens::call_lanes
