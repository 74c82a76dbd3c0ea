#include "trace_call_scan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <queue>
#include <vector>

namespace commlens::analysis::detail {
namespace {

constexpr int kRankShift = 46; // call ids are rank << 46 | thread << 36 | sequence

constexpr std::string_view kCallsSql = R"sql(
SELECT id, function_id, start_ns, end_ns, COALESCE(peer, -1), COALESCE(tag, -1), COALESCE(root, -1),
       COALESCE(comm_id, -1), COALESCE(phase, 0)
FROM mpi_calls WHERE id >= ?1 AND id < ?2 AND function_id IN ({}) ORDER BY id
)sql";

// mpi_requests in request id order, which is the order of the calls that posted them.
constexpr std::string_view kRequestsSql = R"sql(
SELECT request_id, completion_call_id FROM mpi_requests WHERE request_id >= ?1 AND request_id < ?2
ORDER BY request_id
)sql";

// One rank's calls, and its requests read up to the latest call that posted one.
class RankCursor {
public:
  RankCursor(const Database& database, const std::string& calls_sql, bool with_requests, int rank)
      : rank_(rank), calls_(database.prepare(calls_sql)) {
    const std::int64_t begin = std::int64_t{rank} << kRankShift, end = std::int64_t{rank + 1} << kRankShift;
    calls_.bind(1, begin).bind(2, end);
    if (with_requests) {
      requests_ = std::make_unique<Statement>(database.prepare(kRequestsSql));
      requests_->bind(1, begin).bind(2, end);
      requests_done_ = !requests_->step();
    }
    advance();
  }

  bool done() const { return done_; }
  const ScannedCall& call() const { return call_; }

  void advance() {
    done_ = !calls_.step();
    if (done_)
      return;
    call_ = {calls_.integer(0),
             rank_,
             static_cast<int>(calls_.integer(1)),
             calls_.integer(2),
             calls_.integer(3),
             calls_.integer(4),
             calls_.integer(5),
             calls_.integer(6),
             calls_.integer(7),
             static_cast<int>(calls_.integer(8)),
             std::nullopt};
  }

  // The completion call of the request the current call posted, if it completed.
  std::optional<std::int64_t> completion_of_current() {
    if (!requests_)
      return std::nullopt;
    while (!requests_done_ && requests_->integer(0) < call_.id)
      requests_done_ = !requests_->step();
    if (requests_done_ || requests_->integer(0) != call_.id)
      return std::nullopt;
    return requests_->optional_integer(1);
  }

private:
  int rank_;
  Statement calls_;
  std::unique_ptr<Statement> requests_;
  bool requests_done_ = true;
  bool done_ = false;
  ScannedCall call_;
};

std::vector<int> ranks_of(const Database& database) {
  auto query = database.prepare("SELECT rank FROM ranks ORDER BY rank");
  std::vector<int> ranks;
  while (query.step())
    ranks.push_back(static_cast<int>(query.integer(0)));
  return ranks;
}

} // namespace

void scan_traced_calls(const Database& database, const std::set<int>& functions,
                       const std::set<int>& request_functions,
                       const std::function<void(const ScannedCall&)>& visit) {
  if (functions.empty())
    return;
  const auto calls_sql = fmt::format(kCallsSql, fmt::join(functions, ","));
  const bool with_requests = !request_functions.empty() && database.has_table("mpi_requests");
  std::vector<std::unique_ptr<RankCursor>> cursors;
  for (const int rank : ranks_of(database))
    cursors.push_back(std::make_unique<RankCursor>(database, calls_sql, with_requests, rank));
  // The rank whose next call starts first goes next.
  const auto later = [&](std::size_t a, std::size_t b) {
    return cursors[a]->call().start_ns > cursors[b]->call().start_ns;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> next(later);
  for (std::size_t index = 0; index < cursors.size(); ++index)
    if (!cursors[index]->done())
      next.push(index);
  while (!next.empty()) {
    const auto index = next.top();
    next.pop();
    auto& cursor = *cursors[index];
    ScannedCall call = cursor.call();
    if (request_functions.contains(call.function_id))
      call.completion_call_id = cursor.completion_of_current();
    visit(call);
    cursor.advance();
    if (!cursor.done())
      next.push(index);
  }
}

} // namespace commlens::analysis::detail
