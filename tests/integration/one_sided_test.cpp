// one_sided: MPI_Win_create, fences, Put, Get, Accumulate, MPI_Win_free. Expected values mirror
// the pattern documented in examples/one_sided.c. One-sided calls are stored on the communicator
// their window was created on (here MPI_COMM_WORLD, id 0) with the target as peer.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;
constexpr std::int64_t kBytes = 128 * 4;

CallTable expected_calls() {
  CallTable table;
  const int p = kRanks, n = kIterations;
  for (int r = 0; r < p; ++r) {
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    table.add(r, "MPI_Win_create", kWorld, kNoPeer, 0, 0);
    table.add(r, "MPI_Win_fence", kWorld, kNoPeer, 0, 0, 4 * n);
    table.add(r, "MPI_Put", kWorld, right, kBytes, 0, n);
    table.add(r, "MPI_Get", kWorld, left, 0, kBytes, n);
    table.add(r, "MPI_Accumulate", kWorld, right, kBytes, 0, n);
  }
  return table;
}

class OneSided : public ProfiledExample {
protected:
  const JobResult& run() const { return job({example_program("one_sided"), std::to_string(kIterations)}); }
};

TEST_P(OneSided, StoresExactRmaCallsWithTargetPeersAndOriginBytes) {
  auto db = merged(run());
  if (db)
    expect_calls(*db, expected_calls());
}

TEST_P(OneSided, CountsWinFreeOncePerRank) {
  auto db = merged(run());
  if (!db)
    return;
  const auto stored = read_call_stats(*db, {"MPI_Win_free"});
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(stored.count(r, "MPI_Win_free"), 1) << "rank " << r;
}

COMMLENS_IN_BOTH_MODES(OneSided);

} // namespace
} // namespace commlens::integration
