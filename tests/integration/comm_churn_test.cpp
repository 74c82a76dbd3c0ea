// comm_churn: 4000 communicators duplicated, used and freed per rank on 2 ranks, then Waitsome and
// Testany. A summary table of fixed size lost about 3,900 calls per rank here (counted in
// ranks.summary_overflow) and MPI_Waitsome / MPI_Testany vanished from call_stats; every call must
// be counted. Expected values mirror the pattern documented in examples/comm_churn.c.
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

constexpr int kSteps = 4000, kRanksHere = 2;

class CommChurn : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({.command = {example_program("comm_churn"), std::to_string(kSteps)},
                .timeout_seconds = 240,
                .ranks = kRanksHere});
  }
};

std::int64_t calls_of(const Database& db, int rank, const std::string& function) {
  return db.scalar(
      "SELECT COALESCE(sum(s.count), 0) FROM call_stats s JOIN functions f ON f.id = s.function_id "
      "WHERE f.name = '" +
      function + "' AND s.rank = " + std::to_string(rank));
}

TEST_P(CommChurn, CountsEveryCallOfEveryRankWhateverTheNumberOfCommunicators) {
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT sum(summary_overflow) FROM ranks"), 0);
  for (int rank = 0; rank < kRanksHere; ++rank) {
    EXPECT_EQ(calls_of(db, rank, "MPI_Comm_dup"), kSteps) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Barrier"), kSteps) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Comm_free"), kSteps) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Irecv"), 1) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Isend"), 1) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Waitsome"), 2) << "rank " << rank;
    EXPECT_EQ(calls_of(db, rank, "MPI_Testany"), 1) << "rank " << rank;
  }
}

TEST_P(CommChurn, KeepsEachDuplicatesBarrierOnItsOwnCommunicator) {
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  for (int rank = 0; rank < kRanksHere; ++rank)
    EXPECT_EQ(db.scalar("SELECT count(DISTINCT s.comm_id) FROM call_stats s JOIN functions f ON "
                        "f.id = s.function_id WHERE f.name = 'MPI_Barrier' AND s.comm_id != 0 AND s.rank = " +
                        std::to_string(rank)),
              kSteps)
        << "rank " << rank;
}

TEST_P(CommChurn, TraceAndSummaryAgreeOnEveryCall) {
  if (GetParam() != "trace")
    GTEST_SKIP() << "mpi_calls exists in trace mode only";
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls"), db.scalar("SELECT sum(count) FROM call_stats"));
  // Per rank: the churn, the exchange, and MPI_Init, MPI_Comm_rank, MPI_Comm_size, MPI_Finalize.
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls"), kRanksHere * (3 * kSteps + 5 + 4));
}

INSTANTIATE_TEST_SUITE_P(Modes, CommChurn, ::testing::Values(std::string("summary"), std::string("trace")),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace commlens::integration
