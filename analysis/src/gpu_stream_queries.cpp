// The timeline's GPU lanes (gpu_streams.hpp): each rank's CUDA streams, what ran on them, and the
// window queries of memsets, NCCL calls' device spans and synchronisations.
#include "commlens/analysis/gpu_streams.hpp"

#include "commlens/analysis/statement.hpp"
#include "gpu/copy_timing.hpp"
#include "overlapping_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace commlens::analysis {
namespace {

// kernel_names.hpp's kernel_kind, in SQL.
constexpr std::string_view kCommunicationKernel =
    "(instr(name, 'ncclDevKernel') > 0 OR instr(name, 'ncclKernel') > 0 OR mpi_call_id IS NOT NULL)";

using StreamKey = std::tuple<int, int, std::int64_t>;          // rank, device, CUPTI stream
using HandleKey = std::pair<int, std::optional<std::int64_t>>; // rank, cudaStream_t (empty: unknown)

std::string stream_counts_sql(const Database& database) {
  std::vector<std::string> parts;
  if (database.has_table("cuda_kernels"))
    parts.push_back(fmt::format("SELECT rank, device, stream, SUM(NOT {0}), SUM({0}), 0, 0 FROM cuda_kernels "
                                "GROUP BY 1, 2, 3",
                                kCommunicationKernel));
  if (database.has_table("cuda_copies"))
    parts.push_back(
        fmt::format("SELECT rank, device, stream, 0, 0, SUM({}), 0 FROM cuda_copies GROUP BY 1, 2, 3",
                    detail::copy_count(database)));
  if (database.has_table("cuda_memsets"))
    parts.emplace_back("SELECT rank, device, stream, 0, 0, 0, COUNT(*) FROM cuda_memsets GROUP BY 1, 2, 3");
  std::string sql;
  for (const auto& part : parts)
    sql += (sql.empty() ? "" : " UNION ALL ") + part;
  return sql;
}

std::map<StreamKey, GpuStream> read_streams(const Database& database) {
  std::map<StreamKey, GpuStream> streams;
  const auto sql = stream_counts_sql(database);
  if (sql.empty())
    return streams;
  auto query = database.prepare(sql);
  while (query.step()) {
    const StreamKey key{static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                        query.integer(2)};
    auto& stream = streams[key];
    stream.rank = std::get<0>(key);
    stream.device = std::get<1>(key);
    stream.stream = std::get<2>(key);
    stream.compute_kernels += static_cast<std::uint64_t>(query.integer(3));
    stream.communication_kernels += static_cast<std::uint64_t>(query.integer(4));
    stream.copies += static_cast<std::uint64_t>(query.integer(5));
    stream.memsets += static_cast<std::uint64_t>(query.integer(6));
  }
  return streams;
}

// The stream handle each device span was recorded on: its call's nccl_calls row (trace mode).
std::string span_handle_sql(const Database& database, std::string_view columns, std::string_view tail) {
  return database.has_table("nccl_calls")
             ? fmt::format("SELECT {} FROM device_spans d LEFT JOIN nccl_calls n ON n.call_id = d.call_id {}",
                           columns, tail)
             : fmt::format("SELECT {} FROM device_spans d, (SELECT NULL AS stream) n {}", columns, tail);
}

std::map<HandleKey, std::uint64_t> read_span_handles(const Database& database) {
  std::map<HandleKey, std::uint64_t> handles;
  if (!database.has_table("device_spans"))
    return handles;
  auto query = database.prepare(span_handle_sql(database, "d.rank, n.stream, COUNT(*)", "GROUP BY 1, 2"));
  while (query.step())
    handles[{static_cast<int>(query.integer(0)), query.optional_integer(1)}] +=
        static_cast<std::uint64_t>(query.integer(2));
  return handles;
}

using Votes = std::map<HandleKey, std::map<std::pair<int, std::int64_t>, std::uint64_t>>;

// NCCL kernels tied to their call (mpi_call_id) name the handle's CUPTI stream directly.
void vote_by_tied_kernels(const Database& database, Votes& votes) {
  if (!database.has_table("nccl_calls") || !database.has_table("cuda_kernels"))
    return;
  auto query = database.prepare("SELECT k.rank, n.stream, k.device, k.stream, COUNT(*) FROM cuda_kernels k "
                                "JOIN nccl_calls n ON n.call_id = k.mpi_call_id WHERE n.stream IS NOT NULL "
                                "GROUP BY 1, 2, 3, 4");
  while (query.step())
    votes[{static_cast<int>(query.integer(0)), query.integer(1)}]
         [{static_cast<int>(query.integer(2)), query.integer(3)}] +=
        static_cast<std::uint64_t>(query.integer(4));
}

// NCCL kernels without their call (CUPTI attached after the program's first CUDA calls) lie inside
// a span of their call's stream.
void vote_by_contained_kernels(const Database& database, Votes& votes) {
  if (!database.has_table("nccl_calls") || !database.has_table("cuda_kernels") ||
      !database.has_table("device_spans"))
    return;
  std::map<HandleKey, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
  auto span_query = database.prepare(span_handle_sql(database, "d.rank, n.stream, d.start_ns, d.end_ns",
                                                     "WHERE n.stream IS NOT NULL ORDER BY d.start_ns"));
  while (span_query.step())
    spans[{static_cast<int>(span_query.integer(0)), span_query.integer(1)}].emplace_back(
        span_query.integer(2), span_query.integer(3));
  if (spans.empty())
    return;
  auto kernels =
      database.prepare(fmt::format("SELECT rank, device, stream, start_ns, end_ns FROM cuda_kernels "
                                   "WHERE mpi_call_id IS NULL AND {}",
                                   kCommunicationKernel));
  while (kernels.step()) {
    const int rank = static_cast<int>(kernels.integer(0));
    const std::int64_t start = kernels.integer(3), end = kernels.integer(4);
    for (auto& [key, list] : spans) {
      if (key.first != rank)
        continue;
      // The last span starting at or before the kernel: spans of one stream follow one another.
      const auto after = std::upper_bound(list.begin(), list.end(), std::pair{start, INT64_MAX});
      if (after != list.begin() && std::prev(after)->second >= end)
        ++votes[key][{static_cast<int>(kernels.integer(1)), kernels.integer(2)}];
    }
  }
}

// The single GPU a rank's work ran on, if it used one.
std::optional<int> only_device(const std::map<StreamKey, GpuStream>& streams, int rank) {
  std::set<int> devices;
  for (const auto& [key, stream] : streams)
    if (std::get<0>(key) == rank)
      devices.insert(std::get<1>(key));
  return devices.size() == 1 ? std::optional<int>(*devices.begin()) : std::nullopt;
}

} // namespace

std::vector<GpuStream> query_gpu_streams(const Database& database) {
  auto streams = read_streams(database);
  const auto handles = read_span_handles(database);
  Votes votes;
  vote_by_tied_kernels(database, votes);
  vote_by_contained_kernels(database, votes);
  std::vector<GpuStream> own_lanes; // handles without a CUPTI stream
  for (const auto& [handle, spans] : handles) {
    const auto& [rank, nccl_stream] = handle;
    const auto voted = votes.find(handle);
    if (nccl_stream && voted != votes.end() && !voted->second.empty()) {
      const auto best = std::max_element(voted->second.begin(), voted->second.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      const StreamKey key{rank, best->first.first, best->first.second};
      // One handle per CUPTI stream: a second handle voting for the same one keeps its own lane.
      if (const auto found = streams.find(key); found != streams.end() && !found->second.nccl_stream) {
        found->second.nccl_stream = nccl_stream;
        found->second.nccl_spans += spans;
        continue;
      }
    }
    own_lanes.push_back({.rank = rank,
                         .device = only_device(streams, rank),
                         .stream = std::nullopt,
                         .nccl_stream = nccl_stream,
                         .spans_without_stream = !nccl_stream,
                         .nccl_spans = spans});
  }
  std::vector<GpuStream> lanes;
  for (auto& [key, stream] : streams)
    lanes.push_back(stream);
  lanes.insert(lanes.end(), own_lanes.begin(), own_lanes.end());
  std::stable_sort(lanes.begin(), lanes.end(), [](const GpuStream& a, const GpuStream& b) {
    return std::tuple(a.rank, !a.stream.has_value()) < std::tuple(b.rank, !b.stream.has_value());
  });
  return lanes;
}

int stream_lane(const std::vector<GpuStream>& streams, int rank, int device, std::int64_t stream) {
  for (std::size_t lane = 0; lane < streams.size(); ++lane)
    if (streams[lane].rank == rank && streams[lane].device == device && streams[lane].stream == stream)
      return static_cast<int>(lane);
  return -1;
}

int span_lane(const std::vector<GpuStream>& streams, int rank, std::optional<std::int64_t> nccl_stream) {
  for (std::size_t lane = 0; lane < streams.size(); ++lane) {
    const auto& candidate = streams[lane];
    if (candidate.rank == rank && candidate.nccl_spans > 0 &&
        (nccl_stream ? candidate.nccl_stream == nccl_stream : candidate.spans_without_stream))
      return static_cast<int>(lane);
  }
  return -1;
}

std::vector<TimelineMemset> query_timeline_memsets(const Database& database, int rank, std::int64_t start_ns,
                                                   std::int64_t end_ns) {
  return detail::overlapping_rows<TimelineMemset>(
      database, "cuda_memsets", "start_ns, end_ns, device, stream, bytes, memory_kind, correlation_id", rank,
      start_ns, end_ns, [](const Statement& query) -> TimelineMemset {
        return {query.integer(0), query.integer(1), static_cast<int>(query.integer(2)),
                query.integer(3), query.integer(4), query.text(5),
                query.integer(6)};
      });
}

std::vector<TimelineDeviceSpan> query_timeline_device_spans(const Database& database, int rank,
                                                            std::int64_t start_ns, std::int64_t end_ns) {
  std::vector<TimelineDeviceSpan> spans;
  if (!database.has_table("device_spans") || !database.has_table("mpi_calls") || end_ns <= start_ns)
    return spans;
  auto query = database.prepare(span_handle_sql(
      database, "d.call_id, m.function_id, d.start_ns, d.end_ns, n.stream",
      "JOIN mpi_calls m ON m.id = d.call_id WHERE d.rank = ?1 AND d.start_ns < ?3 AND d.end_ns > ?2 "
      "ORDER BY d.start_ns"));
  query.bind(1, rank).bind(2, start_ns).bind(3, end_ns);
  while (query.step())
    spans.push_back({query.integer(0), static_cast<int>(query.integer(1)), query.integer(2), query.integer(3),
                     query.optional_integer(4)});
  return spans;
}

std::vector<TimelineSynchronization> query_timeline_synchronizations(const Database& database, int rank,
                                                                     std::int64_t start_ns,
                                                                     std::int64_t end_ns) {
  return detail::overlapping_rows<TimelineSynchronization>(
      database, "cuda_synchronizations", "start_ns, end_ns, kind, stream", rank, start_ns, end_ns,
      [](const Statement& query) -> TimelineSynchronization {
        return {query.integer(0), query.integer(1), query.text(2), query.optional_integer(3)};
      });
}

} // namespace commlens::analysis
