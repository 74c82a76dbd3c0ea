// The jobs of a run: blocks of run ranks in claim order, a new run clearing an ended one, only
// the last job to finish told to merge, and every process of a job the launcher names finding the
// entry its first process made.
#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/merge.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace commlens;

class JobRegistry : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("commlens-jobs-test-" + std::to_string(getpid()));
    fs::remove_all(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  std::string directory() const { return directory_.string(); }
  static std::string host() { return "testhost"; }

private:
  fs::path directory_;
};

TEST_F(JobRegistry, GivesSpawnedJobsTheRanksAfterEveryEarlierJob) {
  const JobEntry parent = claim_job(directory(), 2, false, host(), getpid());
  const JobEntry first_child = claim_job(directory(), 3, true, host(), getpid());
  const JobEntry second_child = claim_job(directory(), 1, true, host(), getpid());
  EXPECT_EQ(parent.job, 0);
  EXPECT_EQ(parent.first_rank, 0);
  EXPECT_EQ(first_child.job, 1);
  EXPECT_EQ(first_child.first_rank, 2);
  EXPECT_EQ(second_child.job, 2);
  EXPECT_EQ(second_child.first_rank, 5);
  ASSERT_EQ(read_jobs(directory()).size(), 3u);
  EXPECT_TRUE(read_jobs(directory())[1].spawned);
}

TEST_F(JobRegistry, TellsOnlyTheLastJobToFinishToMerge) {
  claim_job(directory(), 2, false, host(), getpid());
  claim_job(directory(), 2, true, host(), getpid());
  int merges = 0;
  const auto merge = [&merges] { ++merges; };
  EXPECT_FALSE(finish_job(directory(), 0, merge)) << "the spawned job still runs";
  EXPECT_EQ(merges, 0);
  EXPECT_TRUE(finish_job(directory(), 1, merge));
  EXPECT_EQ(merges, 1);
}

// The merge the last job runs reads the registry (the ranks every job expects) while finish_job
// holds it locked: it reads the entries, finished ones included, instead of waiting on itself.
TEST_F(JobRegistry, TheMergeOfTheLastJobReadsTheRegistryItHoldsLocked) {
  claim_job(directory(), 2, false, host(), getpid());
  claim_job(directory(), 3, true, host(), getpid());
  finish_job(directory(), 0, [] {});
  std::vector<JobEntry> seen;
  EXPECT_TRUE(finish_job(directory(), 1, [&] { seen = read_jobs(directory()); }));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].finished && seen[1].finished);
  EXPECT_EQ(seen[1].size, 3);
}

TEST_F(JobRegistry, StartsANewRunWhenTheListedJobsEndedAndRemovesTheirRankFiles) {
  claim_job(directory(), 1, false, host(), getpid());
  claim_job(directory(), 2, true, host(), getpid());
  finish_job(directory(), 0, [] {});
  finish_job(directory(), 1, [] {});
  std::ofstream(fs::path(directory()) / rank_database_name(2)) << "a spawned rank of the earlier run";
  const JobEntry next_run = claim_job(directory(), 4, false, host(), getpid());
  EXPECT_EQ(next_run.job, 0);
  EXPECT_EQ(next_run.first_rank, 0);
  EXPECT_EQ(read_jobs(directory()).size(), 1u);
  EXPECT_FALSE(fs::exists(fs::path(directory()) / rank_database_name(2)))
      << "an earlier run's rank file would be merged into this run";
}

TEST_F(JobRegistry, JoinsARunWhoseJobStillRunsOnThisHost) {
  claim_job(directory(), 2, false, host(), getpid()); // this process is alive
  const JobEntry connecting = claim_job(directory(), 2, false, host(), getpid());
  EXPECT_EQ(connecting.job, 1);
  EXPECT_EQ(connecting.first_rank, 2);
}

TEST_F(JobRegistry, EveryProcessOfANamedJobGetsTheEntryItsFirstProcessMade) {
  const JobEntry parent_rank_1 = claim_job(directory(), 2, false, host(), getpid(), "pmix:100");
  const JobEntry parent_rank_0 = claim_job(directory(), 2, false, host(), getpid(), "pmix:100");
  const JobEntry child_rank_2 = claim_job(directory(), 3, true, host(), getpid(), "pmix:101");
  const JobEntry child_rank_0 = claim_job(directory(), 3, true, host(), getpid(), "pmix:101");
  EXPECT_EQ(parent_rank_0.job, parent_rank_1.job);
  EXPECT_EQ(parent_rank_0.first_rank, 0);
  EXPECT_EQ(parent_rank_1.first_rank, 0);
  EXPECT_EQ(child_rank_0.job, 1);
  EXPECT_EQ(child_rank_2.job, 1);
  EXPECT_EQ(child_rank_0.first_rank, 2);
  EXPECT_EQ(child_rank_2.first_rank, 2);
  ASSERT_EQ(read_jobs(directory()).size(), 2u);
  EXPECT_EQ(read_jobs(directory())[1].key, "pmix:101");
}

TEST_F(JobRegistry, AFinishedEntryWithTheSameNameBelongsToAnEarlierRun) {
  claim_job(directory(), 2, false, host(), getpid(), "pmix:7");
  claim_job(directory(), 1, true, host(), getpid(), "pmix:8");
  finish_job(directory(), 0, [] {});
  finish_job(directory(), 1, [] {});
  const JobEntry again = claim_job(directory(), 2, false, host(), getpid(), "pmix:7");
  EXPECT_EQ(again.job, 0);
  ASSERT_EQ(read_jobs(directory()).size(), 1u) << "the earlier run's entries are cleared";
  EXPECT_FALSE(read_jobs(directory())[0].finished);
}

TEST_F(JobRegistry, AnEntryWhoseCreatorOnThisHostIsGoneIsNotJoined) {
  const pid_t gone = fork();
  if (gone == 0) {
    _exit(0);
  }
  waitpid(gone, nullptr, 0);
  claim_job(directory(), 2, false, host(), gone, "pmix:9"); // a killed run's entry, never finished
  claim_job(directory(), 2, false, host(), getpid(), "pmix:9");
  const std::vector<JobEntry> jobs = read_jobs(directory());
  ASSERT_EQ(jobs.size(), 1u) << "the killed run's entry is cleared, not joined";
  EXPECT_EQ(jobs[0].pid, getpid());
}

TEST_F(JobRegistry, ReadsEntriesWithoutAName) {
  fs::create_directories(directory());
  std::ofstream(fs::path(directory()) / kJobRegistryName) << "0 0 2 launched running otherhost 12\n";
  const std::vector<JobEntry> jobs = read_jobs(directory());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].size, 2);
  EXPECT_TRUE(jobs[0].key.empty());
}

TEST_F(JobRegistry, ReadsNoJobsWhereNoRegistryExists) {
  EXPECT_TRUE(read_jobs(directory()).empty());
}

} // namespace
