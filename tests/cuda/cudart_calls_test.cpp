// cudart_calls: libcommlens.so's interposed CUDA runtime functions (collectors/cudart_calls) pass
// every call through to a shared libcudart with its arguments and its result, on any machine: the
// program (cudart_calls.c, over stand_ins' fake libcudart) checks the bytes, the results and that
// each call reached the runtime once, on 4 ranks, and the run is profiled as any other.
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

TEST(CudartCalls, EveryCallReachesTheSharedRuntimeOnceWithItsResult) {
  const JobResult result = run_profiled_job({.command = {CUDART_CALLS_PROGRAM}, .mode = "trace"});
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  const Database db(result.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                      "WHERE f.name = 'MPI_Allreduce'"),
            4);
}

} // namespace
} // namespace commlens::integration
