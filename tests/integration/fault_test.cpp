// fault_sigkill and fault_abort: a job that dies after a known amount of communication and a 2 s
// pause leaves per-rank databases that open cleanly and hold every call made before the fault
// (the profiler flushes at least every COMMLENS_FLUSH_MS, 500 ms by default).
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 25;
constexpr std::int64_t kBytes = 32 * 4;

struct Fault {
  std::string program;
  std::string mode;
};

class FaultedJob : public ::testing::TestWithParam<Fault> {
protected:
  const JobResult& run() const {
    static std::map<std::pair<std::string, std::string>, JobResult> cache;
    const auto key = std::make_pair(GetParam().program, GetParam().mode);
    if (!cache.contains(key))
      cache.emplace(key, run_profiled_job(
                             {.command = {example_program(GetParam().program), std::to_string(kIterations)},
                              .mode = GetParam().mode,
                              .timeout_seconds = 90}));
    return cache.at(key);
  }
};

TEST_P(FaultedJob, EndsTheJobWithAFailure) {
  const auto& result = run();
  EXPECT_NE(result.exit_code, 0) << result.describe();
  EXPECT_NE(result.exit_code, 124) << "the job hung until the timeout\n" << result.describe();
}

TEST_P(FaultedJob, LeavesAPerRankDatabaseThatOpensCleanlyForEveryRank) {
  const auto& result = run();
  for (int r = 0; r < kRanks; ++r) {
    try {
      Database db(result.rank_database(r));
      EXPECT_EQ(db.integrity(), "ok") << result.rank_database(r);
      EXPECT_TRUE(db.has_table("call_stats") && db.has_table("mpi_calls")) << result.rank_database(r);
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what() << "\n" << result.describe();
    }
  }
}

TEST_P(FaultedJob, KeepsEveryCallMadeBeforeTheFault) {
  const auto& result = run();
  for (int r = 0; r < kRanks; ++r) {
    std::unique_ptr<Database> db;
    try {
      db = std::make_unique<Database>(result.rank_database(r));
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what();
      continue;
    }
    CallTable expected;
    expected.add(r, "MPI_Allreduce", kWorld, kNoPeer, kBytes, kBytes, kIterations);
    expected.add(r, "MPI_Barrier", kWorld, kNoPeer, 0, 0, kIterations);
    EXPECT_EQ(difference(expected, read_call_stats(*db, expected.functions())), "")
        << "call_stats of rank " << r << " (" << GetParam().mode << " mode)";
    if (GetParam().mode == "trace") {
      EXPECT_EQ(difference(expected, read_traced_calls(*db, expected.functions())), "")
          << "mpi_calls of rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultedJob,
                         ::testing::Values(Fault{"fault_sigkill", "summary"}, Fault{"fault_sigkill", "trace"},
                                           Fault{"fault_abort", "summary"}, Fault{"fault_abort", "trace"}),
                         [](const auto& info) { return info.param.program + "_" + info.param.mode; });

} // namespace
} // namespace commlens::integration
