// The timeline's CUDA API lanes (cuda_api_calls.hpp): the threads that made CUDA API calls, and a
// window's calls stacked by nesting.
#include "commlens/analysis/cuda_api_calls.hpp"

#include "overlapping_rows.hpp"

#include <algorithm>
#include <map>

namespace commlens::analysis {

std::vector<CudaApiThread> query_cuda_api_threads(const Database& database) {
  std::vector<CudaApiThread> threads;
  if (!database.has_table("cuda_api_calls"))
    return threads;
  // A lane per Linux thread. Its calls stored before its first MPI call have no thread number yet:
  // the number of its other calls names the lane.
  auto query =
      database.prepare("SELECT rank, max(thread) AS number, system_thread, count(*) FROM cuda_api_calls "
                       "GROUP BY rank, system_thread ORDER BY rank, number IS NULL, number, system_thread");
  while (query.step()) {
    const auto thread = query.optional_integer(1);
    threads.push_back({static_cast<int>(query.integer(0)),
                       thread ? std::optional<int>(static_cast<int>(*thread)) : std::nullopt,
                       query.integer(2), static_cast<std::uint64_t>(query.integer(3))});
  }
  return threads;
}

int api_lane(const std::vector<CudaApiThread>& threads, int rank, std::int64_t system_thread) {
  const auto found = std::find_if(threads.begin(), threads.end(), [&](const CudaApiThread& thread) {
    return thread.rank == rank && thread.system_thread == system_thread;
  });
  return found != threads.end() ? static_cast<int>(found - threads.begin()) : -1;
}

std::vector<TimelineApiCall> query_timeline_api_calls(const Database& database, int rank,
                                                      std::int64_t start_ns, std::int64_t end_ns) {
  auto calls = detail::overlapping_rows<TimelineApiCall>(
      database, "cuda_api_calls",
      "start_ns, end_ns, system_thread, (SELECT name FROM cuda_api_functions f WHERE f.id = function_id), "
      "correlation_id",
      rank, start_ns, end_ns, [](const Statement& query) -> TimelineApiCall {
        return {query.integer(0), query.integer(1), query.integer(2), query.optional_text(3).value_or("?"),
                query.integer(4)};
      });
  // Per thread, the ends of the calls still open at each start; among equal starts the enclosing
  // call is the longer one, so it comes first.
  std::stable_sort(calls.begin(), calls.end(), [](const TimelineApiCall& a, const TimelineApiCall& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  std::map<std::int64_t, std::vector<std::int64_t>> open_ends;
  for (auto& call : calls) {
    auto& open = open_ends[call.system_thread];
    while (!open.empty() && open.back() <= call.start_ns)
      open.pop_back();
    call.depth = static_cast<int>(open.size());
    open.push_back(call.end_ns);
  }
  return calls;
}

} // namespace commlens::analysis
