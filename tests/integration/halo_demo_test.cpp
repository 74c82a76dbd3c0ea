// halo_demo: the demo job. 4 ranks form a 2 x 2 non-periodic grid (MPI_Cart_create, no reorder, so
// grid rank = world rank at coordinates (r / 2, r % 2)); edge neighbours are MPI_PROC_NULL and move
// no bytes. Expected values mirror the pattern documented in examples/halo_demo.c.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20, kSide = 16, kColumns = 2;
constexpr std::int64_t kHaloBytes = kSide * 8; // a row of N doubles or one N-double column vector

class HaloDemo : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({example_program("halo_demo"), std::to_string(kIterations), std::to_string(kSide)});
  }
};

TEST_P(HaloDemo, PrintsItsResidualAndStoresExactHaloAndResidualTraffic) {
  const auto& result = run();
  EXPECT_NE(result.standard_output.find("final residual"), std::string::npos) << result.describe();
  auto db = merged(result);
  if (!db)
    return;
  CallTable expected;
  for (int r = 0; r < kRanks; ++r) {
    const std::int64_t grid = db->scalar("SELECT c.id FROM communicators c JOIN functions f ON f.id = "
                                         "c.created_by WHERE f.name = 'MPI_Cart_create' AND c.rank = " +
                                         std::to_string(r));
    const int row = r / kColumns, column = r % kColumns, rows = kRanks / kColumns;
    const std::int64_t neighbours[4] = {
        row > 0 ? r - kColumns : kProcNullPeer, row < rows - 1 ? r + kColumns : kProcNullPeer,
        column > 0 ? r - 1 : kProcNullPeer, column < kColumns - 1 ? r + 1 : kProcNullPeer};
    for (const auto peer : neighbours) {
      const std::int64_t bytes = peer == kProcNullPeer ? 0 : kHaloBytes;
      expected.add(r, "MPI_Irecv", grid, peer, 0, bytes, kIterations);
      expected.add(r, "MPI_Isend", grid, peer, bytes, 0, kIterations);
    }
    expected.add(r, "MPI_Waitall", kNoCommunicator, kNoPeer, 0, 0, kIterations);
    expected.add(r, "MPI_Allreduce", grid, kNoPeer, 8, 8, kIterations);
  }
  expect_calls(*db, expected);
}

COMMLENS_IN_BOTH_MODES(HaloDemo);

} // namespace
} // namespace commlens::integration
