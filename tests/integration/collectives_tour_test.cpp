// collectives_tour: every collective family, blocking, nonblocking and MPI_IN_PLACE. Expected
// values mirror the pattern documented in examples/collectives_tour.c.
#include <cctype>

#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 10;
constexpr std::int64_t kInt = 4, kK = 16, kKInPlace = 8;

std::string nonblocking(const std::string& blocking) { // MPI_Allreduce -> MPI_Iallreduce
  std::string tail = blocking.substr(4);
  tail[0] = static_cast<char>(std::tolower(tail[0]));
  return "MPI_I" + tail;
}

struct Bytes {
  std::int64_t sent, recv;
};

// What each out-of-place call of section A sends and receives on rank r.
std::map<std::string, Bytes> out_of_place_bytes(int r) {
  const std::int64_t p = kRanks, k = kK * kInt, sum_k_plus_i = (p * kK + p * (p - 1) / 2) * kInt;
  const std::int64_t k_plus_r = (kK + r) * kInt;
  const bool root = r == 0;
  return {
      {"MPI_Barrier", {0, 0}},
      {"MPI_Bcast", {root ? k : 0, root ? 0 : k}},
      {"MPI_Reduce", {k, root ? k : 0}},
      {"MPI_Allreduce", {k, k}},
      {"MPI_Gather", {k, root ? k * p : 0}},
      {"MPI_Gatherv", {k_plus_r, root ? sum_k_plus_i : 0}},
      {"MPI_Scatter", {root ? k * p : 0, k}},
      {"MPI_Scatterv", {root ? sum_k_plus_i : 0, k_plus_r}},
      {"MPI_Allgather", {k, k * p}},
      {"MPI_Allgatherv", {k_plus_r, sum_k_plus_i}},
      {"MPI_Alltoall", {k * p, k * p}},
      {"MPI_Alltoallv", {sum_k_plus_i, p * k_plus_r}},
      {"MPI_Alltoallw", {p * k_plus_r, sum_k_plus_i}},
      {"MPI_Reduce_scatter", {sum_k_plus_i, k_plus_r}},
      {"MPI_Reduce_scatter_block", {k * p, k}},
      {"MPI_Scan", {k, k}},
      {"MPI_Exscan", {k, k}},
  };
}

// Section C: an in-place call counts what its out-of-place form would.
std::map<std::string, Bytes> in_place_bytes(int r) {
  const std::int64_t p = kRanks, k = kKInPlace * kInt;
  const bool root = r == 0;
  return {
      {"MPI_Allreduce", {k, k}},
      {"MPI_Reduce", {k, root ? k : 0}},
      {"MPI_Gather", {k, root ? k * p : 0}},
      {"MPI_Scatter", {root ? k * p : 0, k}},
      {"MPI_Allgather", {k, k * p}},
  };
}

CallTable expected_calls() {
  CallTable table;
  for (int r = 0; r < kRanks; ++r) {
    for (const auto& [name, bytes] : out_of_place_bytes(r)) {
      table.add(r, name, kWorld, kNoPeer, bytes.sent, bytes.recv, kIterations);
      table.add(r, nonblocking(name), kWorld, kNoPeer, bytes.sent, bytes.recv, kIterations);
    }
    for (const auto& [name, bytes] : in_place_bytes(r))
      table.add(r, name, kWorld, kNoPeer, bytes.sent, bytes.recv, kIterations);
    table.add(r, "MPI_Wait", kNoCommunicator, kNoPeer, 0, 0, kIterations * 17);
  }
  return table;
}

class CollectivesTour : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({example_program("collectives_tour"), std::to_string(kIterations)});
  }
};

TEST_P(CollectivesTour, StoresExactCallsAndBytesForEveryCollectiveFamily) {
  auto db = merged(run());
  if (db)
    expect_calls(*db, expected_calls());
}

TEST_P(CollectivesTour, CountsInPlaceCallsWithTheBytesOfTheirOutOfPlaceForm) {
  auto db = merged(run());
  if (!db)
    return;
  // The in-place calls use KI = 8 ints, so they land in size bins of their own.
  CallTable expected;
  for (int r = 0; r < kRanks; ++r)
    for (const auto& [name, bytes] : in_place_bytes(r))
      expected.add(r, name, kWorld, kNoPeer, bytes.sent, bytes.recv, kIterations);
  std::set<CallKey> in_place_keys;
  for (const auto& [key, totals] : expected.rows())
    in_place_keys.insert(key);
  CallTable stored;
  const auto all_stored = read_call_stats(*db, expected.functions());
  for (const auto& [key, totals] : all_stored.rows())
    if (in_place_keys.contains(key))
      stored.merge(key, totals);
  EXPECT_EQ(difference(expected, stored), "");
}

TEST_P(CollectivesTour, TraceStoresARequestForEveryNonblockingCollectiveCompletedByMpiWait) {
  if (!trace())
    GTEST_SKIP() << "requests are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  for (int r = 0; r < kRanks; ++r)
    for (const auto& [name, bytes] : out_of_place_bytes(r)) {
      const auto rows = db->query(
          "SELECT count(*), SUM(q.bytes_sent), SUM(q.bytes_recv), SUM(w.name = 'MPI_Wait') FROM mpi_requests "
          "q "
          "JOIN functions f ON f.id = q.function_id LEFT JOIN mpi_calls c ON c.id = q.completion_call_id "
          "LEFT JOIN functions w ON w.id = c.function_id WHERE q.rank = " +
          std::to_string(r) + " AND f.name = '" + nonblocking(name) + "'");
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0][0].as_int(), kIterations) << "rank " << r << " " << nonblocking(name) << " requests";
      EXPECT_EQ(rows[0][1].as_int(), kIterations * bytes.sent) << "rank " << r << " " << nonblocking(name);
      EXPECT_EQ(rows[0][2].as_int(), kIterations * bytes.recv) << "rank " << r << " " << nonblocking(name);
      EXPECT_EQ(rows[0][3].as_int(), kIterations)
          << "rank " << r << " " << nonblocking(name) << ": requests completed by an MPI_Wait in mpi_calls";
    }
}

// Clock offsets are measured at MPI_Finalize and carried back along the drift: on rank 0's
// timeline every rank is inside each MPI_Barrier at one common instant (the k-th barrier of every
// rank is the same barrier). The slack covers the offsets' measurement error on a loaded machine;
// a wrong offset (sign, origin, a run's length of drift) is off by far more.
TEST_P(CollectivesTour, TraceShowsEveryBarrierOverlappingOnAllRanks) {
  if (!trace())
    GTEST_SKIP() << "call times are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  constexpr std::int64_t kSlackNs = 5'000'000;
  const auto barriers =
      db->query("WITH b AS (SELECT rank, start_ns, end_ns, row_number() OVER (PARTITION BY rank ORDER BY "
                "start_ns) AS k "
                "FROM mpi_calls WHERE function_id = (SELECT id FROM functions WHERE name = 'MPI_Barrier')) "
                "SELECT k, count(*), max(start_ns) - min(end_ns) FROM b GROUP BY k ORDER BY k");
  ASSERT_EQ(barriers.size(), static_cast<std::size_t>(kIterations));
  for (const auto& barrier : barriers) {
    EXPECT_EQ(barrier[1].as_int(), kRanks) << "barrier " << barrier[0].as_int();
    EXPECT_LE(barrier[2].as_int(), kSlackNs)
        << "barrier " << barrier[0].as_int() << ": a rank left it before another entered";
  }
  EXPECT_EQ(db->scalar("SELECT count(*) FROM ranks WHERE finalized = 1 AND abs(clock_offset_ns) < " +
                       std::to_string(kSlackNs)),
            kRanks)
      << "one host, one CLOCK_MONOTONIC: every offset is near 0";
}

TEST_P(CollectivesTour, TraceStoresRootZeroForRootedCollectives) {
  if (!trace())
    GTEST_SKIP() << "roots are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  const auto rows = db->query(
      "SELECT f.name, count(*), SUM(m.root = 0) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
      "WHERE f.name IN ('MPI_Bcast','MPI_Reduce','MPI_Gather','MPI_Gatherv','MPI_Scatter','MPI_Scatterv') "
      "GROUP BY 1");
  EXPECT_EQ(rows.size(), 6u);
  for (const auto& row : rows)
    EXPECT_EQ(row[2].as_int(), row[1].as_int()) << *row[0].text << " calls with root 0";
}

COMMLENS_IN_BOTH_MODES(CollectivesTour);

} // namespace
} // namespace commlens::integration
