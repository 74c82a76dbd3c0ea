// fault_sigkill and fault_abort: a job that dies after a known amount of communication and a 2 s
// pause leaves per-rank databases that open cleanly and hold every call made before the fault
// (the profiler flushes at least every COMMLENS_FLUSH_MS, 500 ms by default): in their summaries,
// and in trace mode as chunks that `commlens merge` turns into the calls' rows.
#include "harness/profiled_test.hpp"

#include <cstdlib>
#include <filesystem>

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

// What each rank did before the fault (fault_common.h).
void add_calls_before_fault(CallTable& table, int rank) {
  table.add(rank, "MPI_Allreduce", kWorld, kNoPeer, kBytes, kBytes, kIterations);
  table.add(rank, "MPI_Barrier", kWorld, kNoPeer, 0, 0, kIterations);
}

// A rank file keeps its trace as chunks; `commlens merge` turns those of the killed ranks into rows.
std::filesystem::path merge_rank_files(const JobResult& result) {
  const std::filesystem::path merged = result.work_directory / "merged-after-fault.sqlite";
  std::filesystem::remove(merged);
  const std::string command = std::string(COMMLENS_TEST_CLI) + " merge " + result.output_directory.string() +
                              " -o " + merged.string() + " --keep-rank-files > /dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return merged;
}

TEST_P(FaultedJob, KeepsEveryCallMadeBeforeTheFault) {
  const auto& result = run();
  CallTable expected_trace;
  for (int r = 0; r < kRanks; ++r) {
    std::unique_ptr<Database> db;
    try {
      db = std::make_unique<Database>(result.rank_database(r));
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what();
      continue;
    }
    CallTable expected;
    add_calls_before_fault(expected, r);
    EXPECT_EQ(difference(expected, read_call_stats(*db, expected.functions())), "")
        << "call_stats of rank " << r << " (" << GetParam().mode << " mode)";
    add_calls_before_fault(expected_trace, r);
  }
  if (GetParam().mode == "trace") {
    const Database merged(merge_rank_files(result));
    EXPECT_EQ(difference(expected_trace, read_traced_calls(merged, expected_trace.functions())), "")
        << "mpi_calls merged from the rank files";
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultedJob,
                         ::testing::Values(Fault{"fault_sigkill", "summary"}, Fault{"fault_sigkill", "trace"},
                                           Fault{"fault_abort", "summary"}, Fault{"fault_abort", "trace"}),
                         [](const auto& info) { return info.param.program + "_" + info.param.mode; });

} // namespace
} // namespace commlens::integration
