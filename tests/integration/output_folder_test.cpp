// What a run leaves in its output folder: after the merge at MPI_Finalize, the merged database
// alone (rank files, and the empty -wal and -shm files the merge's read-only opens left beside
// them, used to stay), or with COMMLENS_KEEP_RANK_FILES=1 the rank files too, never a -wal or -shm
// file; and the end-of-run line rank 0 prints. The job: examples/comm_churn.c on 2 ranks.
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace commlens::integration {
namespace {

std::set<std::string> files_in(const std::filesystem::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    names.insert(entry.path().filename().string());
  return names;
}

JobResult run_comm_churn(const std::map<std::string, std::string>& environment) {
  return run_profiled_job(
      {.command = {example_program("comm_churn"), "10"}, .environment = environment, .ranks = 2});
}

TEST(OutputFolder, HoldsOnlyTheMergedDatabaseAfterASuccessfulRun) {
  const JobResult job = run_comm_churn({});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_EQ(files_in(job.output_directory), std::set<std::string>{"commlens.sqlite"});
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM ranks"), 2);
}

TEST(OutputFolder, KeepsTheRankFilesWhenAskedWithoutWalOrShmFiles) {
  const JobResult job = run_comm_churn({{"COMMLENS_KEEP_RANK_FILES", "1"}});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  // The job registry stays beside kept rank files: a later `commlens merge` reads the run's jobs there.
  EXPECT_EQ(
      files_in(job.output_directory),
      (std::set<std::string>{"commlens.sqlite", "commlens-jobs", "rank-00000.sqlite", "rank-00001.sqlite"}));
  Database rank_file(job.rank_database(1));
  EXPECT_GT(rank_file.scalar("SELECT count(*) FROM call_stats WHERE rank = 1"), 0);
}

TEST(OutputFolder, EndOfRunLineNamesTheDatabaseAndNoLossWhenNothingWasLost) {
  const JobResult job = run_comm_churn({});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_error.find("commlens: 2 ranks profiled -> " + job.merged_database().string() + "\n"),
            std::string::npos)
      << job.standard_error;
  EXPECT_EQ(job.standard_error.find("data lost"), std::string::npos) << job.standard_error;
}

TEST(OutputFolder, WithoutTheMergeTheEndOfRunLineNamesTheFolderOfRankFiles) {
  const JobResult job = run_comm_churn({{"COMMLENS_MERGE", "0"}});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_EQ(files_in(job.output_directory),
            (std::set<std::string>{"commlens-jobs", "rank-00000.sqlite", "rank-00001.sqlite"}));
  EXPECT_NE(job.standard_error.find("commlens: 2 ranks profiled -> " + job.output_directory.string() +
                                    " (rank files, not merged)\n"),
            std::string::npos)
      << job.standard_error;
}

} // namespace
} // namespace commlens::integration
