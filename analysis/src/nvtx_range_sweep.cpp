#include "nvtx_range_sweep.hpp"

#include "commlens/profiler/nvtx_domains.hpp"

#include <algorithm>
#include <span>

namespace commlens::analysis::detail {
namespace {

// The program's own ranges: libraries' domains (NCCL's ranges around its calls, commlens' MPI
// ranges) are not its phases.
std::string user_ranges_sql() {
  return "SELECT rank, start_ns, end_ns, COALESCE(name, '(unnamed)') FROM nvtx_ranges WHERE " +
         program_nvtx_domain_sql() + " AND (?1 IS NULL OR rank = ?1) ORDER BY rank, start_ns, end_ns DESC";
}

// Per rank: its calls are the id range rank << 46 .. (rank + 1) << 46 (a rowid range: mpi_calls has
// no index by rank), sorted into start order across its threads.
constexpr std::string_view kCallsOfRankSql = R"sql(
SELECT id, function_id, COALESCE(comm_id, -1), peer, phase, start_ns, end_ns, bytes_sent, bytes_recv
FROM mpi_calls WHERE id >= ?1 << 46 AND id < (?1 + 1) << 46 AND (?2 IS NULL OR phase = ?2)
  AND start_ns >= ?3 AND start_ns < ?4
ORDER BY start_ns
)sql";

// The ranges of one rank still open at a time, oldest first; the innermost is the last.
class OpenRanges {
public:
  // Closes the ranges that ended at or before `time_ns`.
  void close_before(std::int64_t time_ns) {
    std::erase_if(open_, [time_ns](const NvtxRange* range) { return range->end_ns <= time_ns; });
  }
  void open(const NvtxRange& range) { open_.push_back(&range); }
  const NvtxRange* innermost() const { return open_.empty() ? nullptr : open_.back(); }

private:
  std::vector<const NvtxRange*> open_;
};

void visit_calls_of_rank(const Database& database, std::span<const NvtxRange> ranges,
                         std::optional<int> phase, const CallInRange& visit) {
  std::int64_t last_end = ranges.front().end_ns;
  for (const auto& range : ranges)
    last_end = std::max(last_end, range.end_ns);
  auto calls = database.prepare(kCallsOfRankSql);
  calls.bind(1, ranges.front().rank);
  calls.bind(2, phase ? std::optional<std::int64_t>(*phase) : std::nullopt);
  calls.bind(3, ranges.front().start_ns);
  calls.bind(4, last_end);

  OpenRanges open;
  std::size_t next_range = 0;
  TracedCall call;
  call.rank = ranges.front().rank;
  while (calls.step()) {
    call.start_ns = calls.integer(5);
    for (; next_range < ranges.size() && ranges[next_range].start_ns <= call.start_ns; ++next_range)
      open.open(ranges[next_range]);
    open.close_before(call.start_ns + 1); // a range ending at the call's start does not contain it
    const auto* range = open.innermost();
    if (range == nullptr)
      continue;
    call.id = calls.integer(0);
    call.function_id = static_cast<int>(calls.integer(1));
    call.comm_id = calls.integer(2);
    call.peer = static_cast<int>(calls.integer(3));
    call.phase = static_cast<int>(calls.integer(4));
    call.end_ns = calls.integer(6);
    call.bytes_sent = calls.integer(7);
    call.bytes_recv = calls.integer(8);
    visit(call, range->path);
  }
}

} // namespace

std::vector<NvtxRange> load_nvtx_ranges(const Database& database, std::optional<int> rank) {
  std::vector<NvtxRange> ranges;
  if (!database.has_table("nvtx_ranges"))
    return ranges;
  auto query = database.prepare(user_ranges_sql());
  query.bind(1, rank ? std::optional<std::int64_t>(*rank) : std::nullopt);
  while (query.step())
    ranges.push_back({.rank = static_cast<int>(query.integer(0)),
                      .start_ns = query.integer(1),
                      .end_ns = query.integer(2),
                      .path = query.text(3)});
  // Paths are set once the vector no longer grows, because OpenRanges points into it.
  OpenRanges open;
  for (std::size_t index = 0; index < ranges.size(); ++index) {
    auto& range = ranges[index];
    if (index > 0 && ranges[index - 1].rank != range.rank)
      open = OpenRanges{};
    open.close_before(range.start_ns + 1);
    if (const auto* parent = open.innermost())
      range.path = parent->path + "/" + range.path;
    open.open(range);
  }
  return ranges;
}

bool nvtx_path_matches(std::string_view path, std::string_view selected) {
  return path == selected ||
         (path.size() > selected.size() && path.starts_with(selected) && path[selected.size()] == '/');
}

void for_each_call_in_ranges(const Database& database, const std::vector<NvtxRange>& ranges,
                             std::optional<int> phase, const CallInRange& visit) {
  for (std::size_t first = 0; first < ranges.size();) {
    std::size_t last = first;
    while (last < ranges.size() && ranges[last].rank == ranges[first].rank)
      ++last;
    visit_calls_of_rank(database, std::span(ranges).subspan(first, last - first), phase, visit);
    first = last;
  }
}

} // namespace commlens::analysis::detail
