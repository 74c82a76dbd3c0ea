// nested_calls: MPI calls made from inside other MPI calls, by the callbacks MPI runs (a generalized
// request's query function inside MPI_Wait, attribute copy and delete functions inside
// MPI_Comm_dup and MPI_Comm_free). Each outer call ends after the calls it made, so every rank's
// calls are stored out of id order: the counts must be exact, and in trace mode every rank must
// still encode its trace pages at MPI_Finalize (nothing left to the merge to decode).
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 30;

// Per rank (examples/nested_calls.c), each communicator's calls counted together: the program
// makes a communicator per iteration.
CallTable expected_calls() {
  CallTable table;
  const int n = kIterations;
  for (int r = 0; r < kRanks; ++r) {
    for (const char* function : {"MPI_Grequest_start", "MPI_Grequest_complete", "MPI_Wait",
                                 "MPI_Status_set_elements", "MPI_Status_set_cancelled", "MPI_Comm_rank"})
      table.add(r, function, kNoCommunicator, kNoPeer, 0, 0, n);
    table.add(r, "MPI_Allreduce", kNoCommunicator, kNoPeer, 4, 4, n);
    table.add(r, "MPI_Comm_dup", kNoCommunicator, kNoPeer, 0, 0, n + 1);
    table.add(r, "MPI_Comm_free", kNoCommunicator, kNoPeer, 0, 0, n + 1);
    table.add(r, "MPI_Comm_size", kNoCommunicator, kNoPeer, 0, 0, n + 2);
  }
  return table;
}

class NestedCalls : public ProfiledExample {
protected:
  const JobResult& run() const { return job({example_program("nested_calls"), std::to_string(kIterations)}); }
};

TEST_P(NestedCalls, StoresEveryCallMadeInsideAnother) {
  auto db = merged(run());
  if (db)
    expect_calls(*db, expected_calls(), [](const CallTable& table) { return table.without_communicator(); });
}

TEST_P(NestedCalls, EveryRankEncodesItsTracePages) {
  expect_trace_pages_of_every_rank(run());
}

COMMLENS_IN_BOTH_MODES(NestedCalls);

} // namespace
} // namespace commlens::integration
