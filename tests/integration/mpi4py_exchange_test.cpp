// mpi4py_exchange.py run by Debian's python3 with libcommlens.so preloaded. Expected values mirror
// the pattern documented in examples/mpi4py_exchange.py.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;
constexpr std::int64_t kBytes = 64 * 8;

class Mpi4pyExchange : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({python_interpreter(), mpi4py_example(), std::to_string(kIterations)});
  }
};

TEST_P(Mpi4pyExchange, StoresExactCallsOfAPythonProgram) {
  auto db = merged(run());
  if (!db)
    return;
  CallTable expected;
  for (int r = 0; r < kRanks; ++r) {
    expected.add(r, "MPI_Send", kWorld, r ^ 1, kBytes, 0, kIterations);
    expected.add(r, "MPI_Recv", kWorld, r ^ 1, 0, kBytes, kIterations);
    expected.add(r, "MPI_Allreduce", kWorld, kNoPeer, kBytes, kBytes, kIterations);
    expected.add(r, "MPI_Bcast", kWorld, kNoPeer, r == 0 ? kBytes : 0, r == 0 ? 0 : kBytes, kIterations);
  }
  expect_calls(*db, expected);
}

// A Python program's ranks encode their trace pages at MPI_Finalize like a C program's.
TEST_P(Mpi4pyExchange, EveryRankEncodesItsTracePages) {
  expect_trace_pages_of_every_rank(run());
}

COMMLENS_IN_BOTH_MODES(Mpi4pyExchange);

} // namespace
} // namespace commlens::integration
