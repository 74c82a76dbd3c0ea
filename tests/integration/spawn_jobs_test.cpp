// spawn_jobs: a job of P ranks spawns 2 more processes with MPI_Comm_spawn. Both jobs number their
// processes from 0 in their own MPI_COMM_WORLD and write into one output folder; every process
// must keep its own rank file and appear in the merged database with exactly its own calls.
// Expected values mirror the pattern documented in examples/spawn_jobs.c.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <tuple>

#include "harness/call_table.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

constexpr int kChildren = 2;

using SpawnedRun = std::tuple<std::string, int>; // mode, parent ranks

class SpawnJobs : public ::testing::TestWithParam<SpawnedRun> {
protected:
  int parents() const { return std::get<1>(GetParam()); }
  const JobResult& run() const {
    static std::map<SpawnedRun, JobResult> cache;
    auto found = cache.find(GetParam());
    if (found == cache.end())
      found = cache
                  .emplace(GetParam(), run_profiled_job({.command = {example_program("spawn_jobs"),
                                                                     std::to_string(kChildren)},
                                                         .mode = std::get<0>(GetParam()),
                                                         // the rank files are checked below
                                                         .environment = {{"COMMLENS_KEEP_RANK_FILES", "1"}},
                                                         .ranks = parents()}))
                  .first;
    return found->second;
  }
  std::unique_ptr<Database> merged() const {
    const JobResult& result = run();
    EXPECT_EQ(result.exit_code, 0) << result.describe();
    if (!std::filesystem::exists(result.merged_database())) {
      ADD_FAILURE() << "no merged database\n" << result.describe();
      return nullptr;
    }
    return std::make_unique<Database>(result.merged_database());
  }
};

TEST_P(SpawnJobs, KeepsARankFileForEveryProcessOfBothJobs) {
  const JobResult& result = run();
  for (int rank = 0; rank < parents() + kChildren; ++rank)
    EXPECT_TRUE(std::filesystem::exists(result.rank_database(rank))) << "rank " << rank << "\n"
                                                                     << result.describe();
}

TEST_P(SpawnJobs, NumbersTheSpawnedJobsProcessesAfterTheParents) {
  auto db = merged();
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM jobs"), 2);
  EXPECT_EQ(
      db->scalar("SELECT count(*) FROM jobs WHERE job = 0 AND first_rank = 0 AND spawned = 0 AND size = " +
                 std::to_string(parents())),
      1);
  EXPECT_EQ(
      db->scalar("SELECT count(*) FROM jobs WHERE job = 1 AND spawned = 1 AND size = 2 AND first_rank = " +
                 std::to_string(parents())),
      1);
  for (int rank = 0; rank < parents() + kChildren; ++rank) {
    const bool child = rank >= parents();
    EXPECT_EQ(db->scalar("SELECT count(*) FROM ranks WHERE rank = " + std::to_string(rank) +
                         " AND job = " + std::to_string(child ? 1 : 0) +
                         " AND job_rank = " + std::to_string(child ? rank - parents() : rank)),
              1)
        << "rank " << rank;
  }
  EXPECT_EQ(db->scalar("SELECT count(*) FROM run WHERE key = 'missing_ranks' AND value = ''"), 1);
}

TEST_P(SpawnJobs, StoresExactlyEveryProcesssOwnCalls) {
  auto db = merged();
  if (!db)
    return;
  CallTable expected;
  for (int rank = 0; rank < parents() + kChildren; ++rank) {
    const bool child = rank >= parents();
    for (const char* function :
         {"MPI_Init", "MPI_Comm_get_parent", "MPI_Barrier", "MPI_Comm_disconnect", "MPI_Finalize"})
      expected.add(rank, function, kNoCommunicator, kNoPeer, 0, 0);
    expected.add(rank, "MPI_Comm_rank", kNoCommunicator, kNoPeer, 0, 0,
                 child ? 100 + rank - parents() : 10 + rank);
    if (!child)
      expected.add(rank, "MPI_Comm_spawn", kNoCommunicator, kNoPeer, 0, 0);
  }
  EXPECT_EQ(count_difference(expected, read_call_stats(*db)), "")
      << "call_stats (right) differs from the calls of spawn_jobs.c (left)";
  if (std::get<0>(GetParam()) == "trace") {
    EXPECT_EQ(count_difference(expected, read_traced_calls(*db)), "")
        << "mpi_calls (right) differs from the calls of spawn_jobs.c (left)";
  }
}

TEST_P(SpawnJobs, ReportsListTheJobsAndTheirRanks) {
  const JobResult& result = run();
  const std::string report = result.work_directory / "report.txt";
  const std::string command = std::string(COMMLENS_TEST_CLI) + " report " +
                              result.merged_database().string() + " > " + report + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream file(report);
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const std::string jobs = "jobs: 0: ranks 0-" + std::to_string(parents() - 1) + " (launched); 1: ranks " +
                           std::to_string(parents()) + "-" + std::to_string(parents() + 1) + " (spawned)";
  EXPECT_NE(text.find(jobs), std::string::npos) << "expected '" << jobs << "' in\n" << text;
}

TEST_P(SpawnJobs, GivesEachJobsWorldItsOwnCommunicatorId) {
  auto db = merged();
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(DISTINCT id) FROM communicators WHERE name = 'MPI_COMM_WORLD'"), 2);
}

INSTANTIATE_TEST_SUITE_P(Runs, SpawnJobs,
                         ::testing::Combine(::testing::Values(std::string("summary"), std::string("trace")),
                                            ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<SpawnedRun>& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) +
                                  "_parents";
                         });

} // namespace
} // namespace commlens::integration
