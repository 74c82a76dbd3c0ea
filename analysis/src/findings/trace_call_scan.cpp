#include "trace_call_scan.hpp"

#include "call_batches.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <exception>
#include <memory>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

namespace commlens::analysis::detail {
namespace {

// Call ids are rank << 46 | thread << 36 | sequence: a lane (a rank's thread) is one id range.
constexpr int kRankShift = 46;
constexpr int kThreadShift = 36;
// Calls handed over at once, and batches read ahead of the matcher (about 1 MB).
constexpr std::size_t kBatchCalls = 4096;
constexpr std::size_t kBatchesInFlight = 4;

// Through the public view, whatever stores it (older files have a table; an NVTX filter a TEMP view).
constexpr std::string_view kViewSql = R"sql(
SELECT id, function_id, start_ns, end_ns - start_ns, COALESCE(peer, -1), COALESCE(tag, root, -1),
       root IS NOT NULL, COALESCE(comm_id, -1), COALESCE(phase, 0)
FROM mpi_calls WHERE id >= ?1 AND id < ?2 AND function_id IN ({}) ORDER BY id
)sql";
// Straight from the rows behind the view, decoded here as the view does (libprofiler/src/schema.cpp:
// code = function | buffer location << 11 | implementation << 13 | root flag << 17 | phase << 18):
// a third of the scan's time is the view computing columns.
constexpr std::string_view kStoredRowsSql = R"sql(
SELECT id, code & 2047, start_ns, duration_ns, COALESCE(peer, -1), COALESCE(tag_or_root, -1),
       code >> 17 & 1, COALESCE(comm_id, -1), code >> 18
FROM mpi_call_rows WHERE id >= ?1 AND id < ?2 AND code & 2047 IN ({}) ORDER BY id
)sql";

// mpi_requests in request id order, which is the order of the calls that posted them.
constexpr std::string_view kRequestsSql = R"sql(
SELECT request_id, completion_call_id FROM mpi_requests WHERE request_id >= ?1 AND request_id < ?2
ORDER BY request_id
)sql";

struct Lane {
  int rank = 0;
  int thread = 0;
};

// One lane's calls, in time order, and its requests read up to the latest call that posted one.
class LaneCursor {
public:
  LaneCursor(const Database& database, const std::string& calls_sql, bool with_requests, Lane lane)
      : rank_(lane.rank), calls_(database.prepare(calls_sql)) {
    const std::int64_t begin = std::int64_t{lane.rank} << kRankShift | std::int64_t{lane.thread}
                                                                           << kThreadShift;
    const std::int64_t end = begin + (std::int64_t{1} << kThreadShift);
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
    const auto start = calls_.integer(2);
    const auto tag_or_root = calls_.integer(5);
    const bool root = calls_.integer(6) != 0; // the fifth column holds a root, not a tag
    call_ = {calls_.integer(0),
             rank_,
             static_cast<int>(calls_.integer(1)),
             start,
             start + calls_.integer(3),
             calls_.integer(4),
             root ? -1 : tag_or_root,
             root ? tag_or_root : -1,
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

// Threads number a rank's calling threads 0, 1, ... in the order they first called MPI
// (ranks.threads counts them; 0 in files that did not record it, which had one lane per rank).
std::vector<Lane> lanes_of(const Database& database) {
  auto query = database.prepare("SELECT rank, MAX(COALESCE(threads, 1), 1) FROM ranks ORDER BY rank");
  std::vector<Lane> lanes;
  while (query.step())
    for (int thread = 0; thread < query.integer(1); ++thread)
      lanes.push_back({static_cast<int>(query.integer(0)), thread});
  return lanes;
}

// The reader's side: every lane's calls in start order across lanes, in batches.
void read_in_time_order(const Database& database, const std::string& calls_sql,
                        const std::set<int>& request_functions, CallBatches& batches) {
  const bool with_requests = !request_functions.empty() && database.has_table("mpi_requests");
  std::vector<bool> posts_request; // by function id, looked up for every call
  for (const int function : request_functions) {
    posts_request.resize(std::max(posts_request.size(), static_cast<std::size_t>(function) + 1));
    posts_request[static_cast<std::size_t>(function)] = true;
  }
  std::vector<std::unique_ptr<LaneCursor>> cursors;
  for (const auto lane : lanes_of(database))
    cursors.push_back(std::make_unique<LaneCursor>(database, calls_sql, with_requests, lane));
  // The lane whose next call starts first goes next: (start, cursor), earliest first.
  using Next = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (std::size_t index = 0; index < cursors.size(); ++index)
    if (!cursors[index]->done())
      next.emplace(cursors[index]->call().start_ns, index);
  CallBatches::Batch batch;
  while (!next.empty()) {
    const auto index = next.top().second;
    next.pop();
    auto& cursor = *cursors[index];
    auto& call = batch.emplace_back(cursor.call());
    if (static_cast<std::size_t>(call.function_id) < posts_request.size() &&
        posts_request[static_cast<std::size_t>(call.function_id)])
      call.completion_call_id = cursor.completion_of_current();
    cursor.advance();
    if (!cursor.done())
      next.emplace(cursor.call().start_ns, index);
    if (batch.size() == kBatchCalls && !batches.push(std::exchange(batch, {})))
      return; // the matcher stopped
  }
  if (!batch.empty())
    batches.push(std::move(batch));
}

} // namespace

void scan_traced_calls(const Database& database, bool stored_rows, const std::set<int>& functions,
                       const std::set<int>& request_functions,
                       const std::function<void(const ScannedCall&)>& visit) {
  if (functions.empty())
    return;
  const auto calls_sql =
      fmt::format(fmt::runtime(stored_rows ? kStoredRowsSql : kViewSql), fmt::join(functions, ","));
  // The reader thread alone uses the database connection until it is joined.
  CallBatches batches(kBatchesInFlight);
  std::exception_ptr reader_failure;
  std::thread reader([&] {
    try {
      read_in_time_order(database, calls_sql, request_functions, batches);
    } catch (...) {
      reader_failure = std::current_exception();
    }
    batches.close();
  });
  try {
    while (const auto batch = batches.pop())
      for (const auto& call : *batch)
        visit(call);
  } catch (...) {
    batches.cancel();
    reader.join();
    throw;
  }
  reader.join();
  if (reader_failure)
    std::rethrow_exception(reader_failure);
}

} // namespace commlens::analysis::detail
