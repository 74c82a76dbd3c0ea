// thread_multiple: 4 threads per rank under MPI_THREAD_MULTIPLE, each on its own dup of
// MPI_COMM_WORLD. Expected values mirror the pattern documented in examples/thread_multiple.c.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 50, kThreads = 4;
constexpr std::int64_t kBytes = 48 * 4;

std::vector<std::int64_t> dup_ids(const Database& db, int rank) {
  std::vector<std::int64_t> ids;
  for (const auto& row : db.query("SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by "
                                  "WHERE f.name = 'MPI_Comm_dup' AND c.rank = " +
                                  std::to_string(rank) + " ORDER BY c.id"))
    ids.push_back(row[0].as_int());
  return ids;
}

class ThreadMultiple : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({example_program("thread_multiple"), std::to_string(kIterations)});
  }
};

TEST_P(ThreadMultiple, RegistersFourDupsWithTheSameIdsOnEveryRank) {
  auto db = merged(run());
  if (!db)
    return;
  const auto on_rank_zero = dup_ids(*db, 0);
  EXPECT_EQ(on_rank_zero.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(std::set<std::int64_t>(on_rank_zero.begin(), on_rank_zero.end()).size(), on_rank_zero.size());
  for (int r = 1; r < kRanks; ++r)
    EXPECT_EQ(dup_ids(*db, r), on_rank_zero) << "rank " << r;
}

TEST_P(ThreadMultiple, StoresExactCountsForEveryThreadsCommunicator) {
  auto db = merged(run());
  if (!db)
    return;
  CallTable expected;
  for (int r = 0; r < kRanks; ++r) {
    expected.add(r, "MPI_Comm_dup", kWorld, kNoPeer, 0, 0, kThreads);
    for (const auto id : dup_ids(*db, r)) {
      expected.add(r, "MPI_Sendrecv", id, r ^ 1, kBytes, kBytes, kIterations);
      expected.add(r, "MPI_Allreduce", id, kNoPeer, kBytes, kBytes, kIterations);
    }
  }
  expect_calls(*db, expected);
}

TEST_P(ThreadMultiple, TraceAttributesTheCallsOfEachWorkerThreadToADistinctThread) {
  if (!trace())
    GTEST_SKIP() << "threads are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<std::int64_t> calls_per_thread;
    for (const auto& row : db->query("SELECT m.thread, count(*) FROM mpi_calls m JOIN functions f ON f.id = "
                                     "m.function_id WHERE f.name IN ('MPI_Sendrecv','MPI_Allreduce') AND "
                                     "m.rank = " +
                                     std::to_string(r) + " GROUP BY 1"))
      calls_per_thread.push_back(row[1].as_int());
    EXPECT_EQ(calls_per_thread, std::vector<std::int64_t>(kThreads, 2 * kIterations)) << "rank " << r;
  }
}

// Four threads' calls interleave (each thread's ids are its own sequence): every rank still encodes
// its trace pages at MPI_Finalize.
TEST_P(ThreadMultiple, EveryRankEncodesItsTracePages) {
  expect_trace_pages_of_every_rank(run());
}

COMMLENS_IN_BOTH_MODES(ThreadMultiple);

} // namespace
} // namespace commlens::integration
