#include "trace_call_scan.hpp"

#include "call_batches.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <queue>
#include <thread>
#include <tuple>
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
// Readers of the trace at once, each with its own SQLite connection and lanes.
constexpr std::size_t kMostReaders = 4;

// Both queries give the columns of mpi_call_rows (libprofiler/src/schema.cpp: code = function |
// buffer location << 11 | implementation << 13 | root flag << 17 | phase << 18), decoded here
// rather than in SQL: a call's expressions in SQL cost more than its read.
// Through the public view, whatever stores it (older files have a table; an NVTX filter a TEMP view).
constexpr std::string_view kViewSql = R"sql(
SELECT id, function_id | (root IS NOT NULL) << 17 | COALESCE(phase, 0) << 18, start_ns,
       end_ns - start_ns, peer, COALESCE(tag, root), comm_id
FROM mpi_calls WHERE id >= ?1 AND id < ?2 AND function_id IN ({}) ORDER BY id
)sql";
// Straight from the rows behind the view (faster: a third of the scan's time was the view
// computing columns); the functions are chosen while decoding.
constexpr std::string_view kStoredRowsSql = R"sql(
SELECT id, code, start_ns, duration_ns, peer, tag_or_root, comm_id
FROM mpi_call_rows WHERE id >= ?1 AND id < ?2 ORDER BY id
)sql";
constexpr std::int64_t kFunctionMask = 2047;
constexpr int kRootFlagShift = 17;
constexpr int kPhaseShift = 18;

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
  LaneCursor(const Database& database, const std::string& calls_sql, const std::vector<bool>& chosen,
             bool with_requests, Lane lane)
      : rank_(lane.rank), chosen_(chosen), calls_(database.prepare(calls_sql)) {
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
    std::int64_t code = 0;
    do {
      done_ = !calls_.step();
      if (done_)
        return;
      code = calls_.integer(1);
    } while (!chosen(static_cast<std::size_t>(code & kFunctionMask)));
    const auto start = calls_.integer(2);
    const auto tag_or_root = calls_.optional_integer(5).value_or(-1);
    const bool root = (code >> kRootFlagShift & 1) != 0; // the sixth column holds a root, not a tag
    call_ = {calls_.integer(0),
             rank_,
             static_cast<int>(code & kFunctionMask),
             start,
             start + calls_.integer(3),
             calls_.optional_integer(4).value_or(-1),
             root ? -1 : tag_or_root,
             root ? tag_or_root : -1,
             calls_.optional_integer(6).value_or(-1),
             static_cast<int>(code >> kPhaseShift),
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
  bool chosen(std::size_t function) const { return function < chosen_.size() && chosen_[function]; }

  int rank_;
  const std::vector<bool>& chosen_;
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

// Function ids to a lookup table, consulted for every call.
std::vector<bool> by_function(const std::set<int>& functions) {
  std::vector<bool> table(functions.empty() ? 0 : static_cast<std::size_t>(*functions.rbegin()) + 1);
  for (const int function : functions)
    table[static_cast<std::size_t>(function)] = true;
  return table;
}

// A reader's side: its lanes' calls in start order across those lanes, in batches. Equal starts go
// in id order, so that the readers' streams merge into the order one reader would give.
void read_in_time_order(const Database& database, const std::string& calls_sql,
                        const std::vector<Lane>& lanes, const std::set<int>& functions,
                        const std::set<int>& request_functions, CallBatches& batches) {
  const bool with_requests = !request_functions.empty() && database.has_table("mpi_requests");
  const std::vector<bool> chosen = by_function(functions);
  const std::vector<bool> posts_request = by_function(request_functions);
  std::vector<std::unique_ptr<LaneCursor>> cursors;
  for (const auto lane : lanes)
    cursors.push_back(std::make_unique<LaneCursor>(database, calls_sql, chosen, with_requests, lane));
  // The lane whose next call comes first goes next: (start, id, cursor), earliest first.
  using Next = std::tuple<std::int64_t, std::int64_t, std::size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  const auto queue = [&](std::size_t index) {
    if (!cursors[index]->done())
      next.emplace(cursors[index]->call().start_ns, cursors[index]->call().id, index);
  };
  for (std::size_t index = 0; index < cursors.size(); ++index)
    queue(index);
  CallBatches::Batch batch;
  while (!next.empty()) {
    const auto index = std::get<2>(next.top());
    next.pop();
    auto& cursor = *cursors[index];
    auto& call = batch.emplace_back(cursor.call());
    if (static_cast<std::size_t>(call.function_id) < posts_request.size() &&
        posts_request[static_cast<std::size_t>(call.function_id)])
      call.completion_call_id = cursor.completion_of_current();
    cursor.advance();
    queue(index);
    if (batch.size() == kBatchCalls && !batches.push(std::exchange(batch, {})))
      return; // the matcher stopped
  }
  if (!batch.empty())
    batches.push(std::move(batch));
}

// The matcher's view of one reader: the batch being taken and the place in it.
class ReaderStream {
public:
  explicit ReaderStream(CallBatches& batches) : batches_(batches) { refill(); }

  const ScannedCall* current() const { return done_ ? nullptr : &batch_[position_]; }
  void advance() {
    if (++position_ == batch_.size())
      refill();
  }

private:
  void refill() {
    position_ = 0;
    auto next = batches_.pop(); // a reader never hands over an empty batch
    done_ = !next;
    if (next)
      batch_ = std::move(*next);
  }

  CallBatches& batches_;
  CallBatches::Batch batch_;
  std::size_t position_ = 0;
  bool done_ = false;
};

// The readers' streams merged by (start, id); a linear choice, as there are at most a few.
void visit_in_time_order(std::vector<std::unique_ptr<CallBatches>>& queues,
                         const std::function<void(const ScannedCall&)>& visit) {
  std::vector<ReaderStream> streams;
  streams.reserve(queues.size());
  for (auto& queue : queues)
    streams.emplace_back(*queue);
  for (;;) {
    ReaderStream* earliest = nullptr;
    for (auto& stream : streams) {
      const ScannedCall* call = stream.current();
      if (call != nullptr &&
          (earliest == nullptr || std::pair(call->start_ns, call->id) <
                                      std::pair(earliest->current()->start_ns, earliest->current()->id)))
        earliest = &stream;
    }
    if (earliest == nullptr)
      return;
    visit(*earliest->current());
    earliest->advance();
  }
}

// Readers of their own: one for each core up to kMostReaders, when each may open a connection of
// its own (a filter's TEMP view lives on the caller's connection only).
std::size_t reader_count(bool stored_rows, std::size_t lanes) {
  if (!stored_rows)
    return 1;
  const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min({cores, kMostReaders, lanes}));
}

} // namespace

void scan_traced_calls(const Database& database, bool stored_rows, const std::set<int>& functions,
                       const std::set<int>& request_functions,
                       const std::function<void(const ScannedCall&)>& visit) {
  if (functions.empty())
    return;
  const auto calls_sql = stored_rows ? std::string(kStoredRowsSql)
                                     : fmt::format(fmt::runtime(kViewSql), fmt::join(functions, ","));
  const std::vector<Lane> lanes = lanes_of(database);
  const std::size_t readers = reader_count(stored_rows, lanes.size());
  std::vector<std::vector<Lane>> lanes_of_reader(readers);
  for (std::size_t index = 0; index < lanes.size(); ++index)
    lanes_of_reader[index % readers].push_back(lanes[index]);
  // Reader 0 alone uses the caller's connection until it is joined; the others open their own.
  std::vector<std::unique_ptr<CallBatches>> queues;
  std::vector<std::exception_ptr> failures(readers);
  std::vector<std::thread> threads;
  for (std::size_t reader = 0; reader < readers; ++reader)
    queues.push_back(std::make_unique<CallBatches>(kBatchesInFlight));
  for (std::size_t reader = 0; reader < readers; ++reader) {
    threads.emplace_back([&, reader] {
      try {
        const std::unique_ptr<Database> own =
            reader == 0 ? nullptr : std::make_unique<Database>(database.path());
        read_in_time_order(own ? *own : database, calls_sql, lanes_of_reader[reader], functions,
                           request_functions, *queues[reader]);
      } catch (...) {
        failures[reader] = std::current_exception();
      }
      queues[reader]->close();
    });
  }
  const auto join = [&] {
    for (auto& thread : threads)
      thread.join();
  };
  try {
    visit_in_time_order(queues, visit);
  } catch (...) {
    for (auto& queue : queues)
      queue->cancel();
    join();
    throw;
  }
  join();
  for (const auto& failure : failures)
    if (failure)
      std::rethrow_exception(failure);
}

} // namespace commlens::analysis::detail
