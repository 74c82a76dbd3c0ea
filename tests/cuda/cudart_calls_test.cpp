// cudart_calls: libcommlens.so's interposed CUDA runtime functions (collectors/cudart_calls) pass
// every call through to a shared libcudart with its arguments and its result, on any machine: the
// program (cudart_calls.c and cudart_calls_library.c, over stand_ins' fake libcudart) checks the
// bytes, the results and that each call reached the runtime once, on 4 ranks, with the library
// linked, opened locally, or both over two runtime versions, and the run is profiled as any other.
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace commlens::integration {
namespace {

void expect_every_call_reaches_the_runtime(const std::vector<std::string>& command) {
  const JobResult result = run_profiled_job({.command = command, .mode = "trace"});
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  const Database db(result.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                      "WHERE f.name = 'MPI_Allreduce'"),
            4);
}

TEST(CudartCalls, EveryCallReachesTheSharedRuntimeOnceWithItsResult) {
  expect_every_call_reaches_the_runtime({CUDART_CALLS_PROGRAM});
}

// A library opened with RTLD_LOCAL (as Python opens its extensions) binds its runtime calls to
// libcommlens.so's functions, but its libcudart is not in the global scope behind them.
TEST(CudartCalls, ALibraryOpenedLocallyReachesItsOwnRuntime) {
  expect_every_call_reaches_the_runtime({CUDART_CALLS_DLOPEN_PROGRAM, CUDART_CALLS_LIBRARY});
}

// PyTorch's libcudart in the global scope and an extension's own, of another version, opened
// locally: each library's calls reach its own runtime (the two fail invalid copies differently).
TEST(CudartCalls, TwoRuntimeVersionsEachKeepTheirCallers) {
  expect_every_call_reaches_the_runtime({CUDART_CALLS_TWO_RUNTIMES_PROGRAM, CUDART_CALLS_LIBRARY_12});
}

} // namespace
} // namespace commlens::integration
