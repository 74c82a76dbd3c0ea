// ring_pingpong: blocking point-to-point with several peers and tags, MPI_ANY_SOURCE and
// MPI_PROC_NULL. Expected values mirror the pattern documented in examples/ring_pingpong.c.
#include "harness/profiled_test.hpp"
#include "ring_pingpong_calls.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;
using ring_pingpong::kGatherBytes;
using ring_pingpong::kProcNullBytes;

CallTable expected_calls() {
  return ring_pingpong_calls(kRanks, kIterations);
}

bool is_any_source_receive(const CallKey& key) {
  return key.rank == 0 && key.function == "MPI_Recv" && key.size_bin == size_bin(kGatherBytes);
}

// The contract allows an MPI_ANY_SOURCE receive to be stored under -3 or under the rank it matched.
CallTable any_source_as_minus_three(const CallTable& table) {
  return table.transformed([](CallKey& key) {
    if (is_any_source_receive(key))
      key.peer = kAnySourcePeer;
  });
}

class RingPingpong : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({example_program("ring_pingpong"), std::to_string(kIterations)});
  }
};

TEST_P(RingPingpong, StoresExactCallsAndBytesPerFunctionPeerAndCommunicator) {
  auto db = merged(run());
  if (db)
    expect_calls(*db, expected_calls(), any_source_as_minus_three);
}

TEST_P(RingPingpong, StoresSendsToProcNullUnderPeerMinusTwo) {
  auto db = merged(run());
  if (!db)
    return;
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(read_call_stats(*db, {"MPI_Send"})
                  .rows()
                  .count({r, "MPI_Send", kWorld, size_bin(kProcNullBytes), kProcNullPeer}),
              1u)
        << "rank " << r;
}

TEST_P(RingPingpong, StoresAnySourceReceivesUnderMinusThreeOrUnderEachTrueSender) {
  auto db = merged(run());
  if (!db)
    return;
  std::map<std::int64_t, std::int64_t> count_by_peer;
  const auto receives = read_call_stats(*db, {"MPI_Recv"});
  for (const auto& [key, totals] : receives.rows())
    if (is_any_source_receive(key))
      count_by_peer[key.peer] += totals.count;
  std::map<std::int64_t, std::int64_t> unresolved{{kAnySourcePeer, kIterations * (kRanks - 1)}}, resolved;
  for (int sender = 1; sender < kRanks; ++sender)
    resolved[sender] = kIterations;
  EXPECT_TRUE(count_by_peer == unresolved || count_by_peer == resolved)
      << "rank 0's " << kIterations * (kRanks - 1) << " MPI_ANY_SOURCE receives are stored under "
      << ::testing::PrintToString(count_by_peer);
}

TEST_P(RingPingpong, TraceStoresTheTagOfEverySend) {
  if (!trace())
    GTEST_SKIP() << "tags are stored in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  for (int r = 0; r < kRanks; ++r) {
    std::map<std::int64_t, std::int64_t> sends_by_tag;
    for (const auto& row : db->query("SELECT m.tag, count(*) FROM mpi_calls m JOIN functions f ON f.id = "
                                     "m.function_id WHERE f.name = 'MPI_Send' AND m.rank = " +
                                     std::to_string(r) + " GROUP BY 1"))
      sends_by_tag[row[0].as_int(-99)] = row[1].as_int();
    std::map<std::int64_t, std::int64_t> expected{{1, kIterations}, {2, kIterations}, {5, kIterations}};
    if (r != 0)
      expected[4] = kIterations;
    EXPECT_EQ(sends_by_tag, expected) << "rank " << r;
  }
}

COMMLENS_IN_BOTH_MODES(RingPingpong);

} // namespace
} // namespace commlens::integration
