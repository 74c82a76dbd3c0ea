// nonblocking_mix: Isend/Irecv completed by Waitall, Waitany and Testsome, and persistent requests.
// Expected values mirror the pattern documented in examples/nonblocking_mix.c.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;
constexpr std::int64_t kSmall = 32 * 4, kLarge = 512 * 8;

CallTable expected_calls() {
  CallTable table;
  const int p = kRanks, n = kIterations;
  for (int r = 0; r < p; ++r) {
    const int right = (r + 1) % p, left = (r - 1 + p) % p, pair = r ^ 1;
    table.add(r, "MPI_Irecv", kWorld, left, 0, kSmall, n);
    table.add(r, "MPI_Irecv", kWorld, right, 0, kSmall, n);
    table.add(r, "MPI_Isend", kWorld, right, kSmall, 0, n);
    table.add(r, "MPI_Isend", kWorld, left, kSmall, 0, n);
    table.add(r, "MPI_Irecv", kWorld, pair, 0, kSmall, 3 * n);
    table.add(r, "MPI_Isend", kWorld, pair, kSmall, 0, 3 * n);
    table.add(r, "MPI_Irecv", kWorld, left, 0, kLarge, n);
    table.add(r, "MPI_Isend", kWorld, right, kLarge, 0, n);
    table.add(r, "MPI_Waitall", kNoCommunicator, kNoPeer, 0, 0, 2 * n);
    table.add(r, "MPI_Waitany", kNoCommunicator, kNoPeer, 0, 0, 6 * n);
  }
  return table;
}

class NonblockingMix : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({example_program("nonblocking_mix"), std::to_string(kIterations)});
  }
};

TEST_P(NonblockingMix, StoresExactCallsAndBytesPerFunctionAndPeer) {
  auto db = merged(run());
  if (db)
    expect_calls(*db, expected_calls());
}

TEST_P(NonblockingMix, CountsTestsomeAtLeastOncePerIterationWithoutBytes) {
  auto db = merged(run());
  if (!db)
    return;
  const auto stored = read_call_stats(*db, {"MPI_Testsome"});
  for (int r = 0; r < kRanks; ++r) {
    const auto totals = stored.totals(r, "MPI_Testsome");
    EXPECT_GE(totals.count, kIterations) << "rank " << r;
    EXPECT_EQ(totals.bytes_sent + totals.bytes_recv, 0) << "rank " << r;
  }
}

TEST_P(NonblockingMix, CountsEachPersistentRequestCallExactlyOnce) {
  auto db = merged(run());
  if (!db)
    return;
  const auto stored =
      read_call_stats(*db, {"MPI_Send_init", "MPI_Recv_init", "MPI_Startall", "MPI_Request_free"});
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(stored.count(r, "MPI_Send_init"), 1) << "rank " << r;
    EXPECT_EQ(stored.count(r, "MPI_Recv_init"), 1) << "rank " << r;
    EXPECT_EQ(stored.count(r, "MPI_Startall"), kIterations) << "rank " << r;
    EXPECT_EQ(stored.count(r, "MPI_Request_free"), 2) << "rank " << r;
  }
}

TEST_P(NonblockingMix, TraceStoresOneRequestRowPerNonblockingOperationWithItsBytes) {
  if (!trace())
    GTEST_SKIP() << "requests are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  const std::int64_t n = kIterations;
  for (int r = 0; r < kRanks; ++r) {
    const auto rows = db->query("SELECT f.name, count(*), SUM(q.bytes_sent), SUM(q.bytes_recv) FROM "
                                "mpi_requests q JOIN functions f ON "
                                "f.id = q.function_id WHERE q.rank = " +
                                std::to_string(r) + " GROUP BY 1");
    std::map<std::string, std::vector<std::int64_t>> by_function;
    std::vector<std::int64_t> persistent(3, 0);
    for (const auto& row : rows) {
      std::vector<std::int64_t> values{row[1].as_int(), row[2].as_int(), row[3].as_int()};
      const std::string name = row[0].text.value_or("?");
      if (name == "MPI_Isend" || name == "MPI_Irecv")
        by_function[name] = values;
      else
        for (int i = 0; i < 3; ++i)
          persistent[i] += values[i]; // init or start call: either is allowed
    }
    EXPECT_EQ(by_function["MPI_Isend"], (std::vector<std::int64_t>{6 * n, 5 * n * kSmall + n * kLarge, 0}))
        << "rank " << r << " MPI_Isend requests: count, bytes sent, bytes received";
    EXPECT_EQ(by_function["MPI_Irecv"], (std::vector<std::int64_t>{6 * n, 0, 5 * n * kSmall + n * kLarge}))
        << "rank " << r << " MPI_Irecv requests";
    EXPECT_EQ(persistent, (std::vector<std::int64_t>{2 * n, n * kSmall, n * kSmall}))
        << "rank " << r << " persistent activations";
  }
}

TEST_P(NonblockingMix, TraceLinksEveryRequestToTheWaitOrTestCallThatCompletedIt) {
  if (!trace())
    GTEST_SKIP() << "requests are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  const std::int64_t n = kIterations;
  for (int r = 0; r < kRanks; ++r) {
    std::map<std::string, std::int64_t> completed_by;
    for (const auto& row :
         db->query("SELECT COALESCE(f.name, 'no such call'), count(*) FROM mpi_requests q "
                   "LEFT JOIN mpi_calls c ON c.id = q.completion_call_id LEFT JOIN functions f "
                   "ON f.id = c.function_id WHERE q.rank = " +
                   std::to_string(r) + " GROUP BY 1"))
      completed_by[row[0].text.value_or("?")] = row[1].as_int();
    const std::map<std::string, std::int64_t> expected{
        {"MPI_Waitall", 6 * n}, {"MPI_Waitany", 6 * n}, {"MPI_Testsome", 2 * n}};
    EXPECT_EQ(completed_by, expected) << "rank " << r;
    EXPECT_EQ(db->scalar("SELECT count(*) FROM mpi_requests q JOIN mpi_calls c ON c.id = q.request_id JOIN "
                         "functions f ON f.id = c.function_id WHERE f.name IN ('MPI_Isend','MPI_Irecv') AND "
                         "q.rank = " +
                         std::to_string(r)),
              12 * n)
        << "rank " << r << ": requests whose request_id is the id of the posting call";
  }
}

// Requests complete out of the order they were started (Waitany, Testsome): every rank still
// encodes its trace pages at MPI_Finalize.
TEST_P(NonblockingMix, EveryRankEncodesItsTracePages) {
  expect_trace_pages_of_every_rank(run());
}

COMMLENS_IN_BOTH_MODES(NonblockingMix);

} // namespace
} // namespace commlens::integration
