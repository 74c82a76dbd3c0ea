// threaded_sendrecv: 4 threads per rank in MPI_Sendrecv at once on 2 ranks; rank 1 pauses 20 ms
// before each exchange, so rank 0's four threads wait inside MPI together for most of the run. The
// rank's time in MPI is the wall time during which at least one thread was inside MPI; adding up
// the threads' times reported more than the run (361% of the run's length in one report). Expected
// values mirror examples/threaded_sendrecv.c.
#include "harness/cli.hpp"
#include "harness/database.hpp"
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <memory>

namespace commlens::integration {
namespace {

constexpr int kIterations = 50, kPauseMs = 20, kThreads = 4, kRanksHere = 2;

class ThreadedSendrecv : public ProfiledExample {
protected:
  const JobResult& run() const {
    return job({.command = {example_program("threaded_sendrecv"), std::to_string(kIterations),
                            std::to_string(kPauseMs)},
                .ranks = kRanksHere});
  }
};

TEST_P(ThreadedSendrecv, EachWorkerThreadHasItsOwnCallsAndTime) {
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  for (int rank = 0; rank < kRanksHere; ++rank) {
    const std::string where = " WHERE rank = " + std::to_string(rank);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM thread_stats" + where +
                        " AND calls = " + std::to_string(kIterations)),
              kThreads)
        << "rank " << rank;
    EXPECT_EQ(db.scalar("SELECT sum(calls) FROM thread_stats" + where),
              db.scalar("SELECT sum(count) FROM call_stats" + where));
    // Both convert summed ticks to ns, over different groupings: at most 1 ns apart per row.
    EXPECT_NEAR(db.scalar("SELECT sum(time_in_mpi_ns) FROM thread_stats" + where),
                db.scalar("SELECT sum(time_total_ns) FROM call_stats" + where),
                db.scalar("SELECT count(*) FROM call_stats" + where) +
                    db.scalar("SELECT count(*) FROM thread_stats" + where));
  }
}

TEST_P(ThreadedSendrecv, RankTimeInMpiIsWallTimeWithinTheRunAndAtLeastEachThreadsTime) {
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  for (int rank = 0; rank < kRanksHere; ++rank) {
    const std::string where = " WHERE rank = " + std::to_string(rank);
    const auto wall = db.scalar("SELECT mpi_wall_ns FROM ranks" + where);
    EXPECT_GT(wall, 0) << "rank " << rank;
    EXPECT_LE(wall, db.scalar("SELECT finalize_ns FROM ranks" + where)) << "rank " << rank;
    EXPECT_GE(wall, db.scalar("SELECT max(time_in_mpi_ns) FROM thread_stats" + where)) << "rank " << rank;
    // The union of the calls, at most their sum (give or take the ns each conversion rounds).
    EXPECT_LE(wall, db.scalar("SELECT sum(time_in_mpi_ns) FROM thread_stats" + where) + 100)
        << "rank " << rank;
  }
}

TEST_P(ThreadedSendrecv, ReportGivesEachRankAShareOfAtMostTheWholeRunAndListsTheThreads) {
  const JobResult& job = run();
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  const auto report =
      nlohmann::json::parse(commlens_output("report " + job.merged_database().string() + " --format json"));
  ASSERT_EQ(report["ranks"].size(), static_cast<std::size_t>(kRanksHere));
  // Rank 0's threads each waited about kIterations * kPauseMs inside MPI, at the same time: summed,
  // more than the whole run (what the report used to give as its time in MPI).
  const auto& waiting = report["ranks"][0];
  EXPECT_GT(waiting["mpi_thread_sum_ns"].get<std::int64_t>(), waiting["application_ns"].get<std::int64_t>())
      << waiting;
  EXPECT_GE(waiting["mpi_ns"].get<std::int64_t>(), std::int64_t{kIterations} * kPauseMs * 1'000'000 * 9 / 10)
      << waiting;
  for (const auto& rank : report["ranks"]) {
    EXPECT_LE(rank["mpi_share"].get<double>(), 1.0) << rank;
    EXPECT_LE(rank["mpi_ns"].get<std::int64_t>(), rank["mpi_thread_sum_ns"].get<std::int64_t>()) << rank;
    EXPECT_FALSE(rank["mpi_ns_summed_over_threads"].get<bool>()) << rank;
  }
  int worker_rows = 0;
  for (const auto& thread : report["threads"])
    worker_rows += thread["calls"] == kIterations ? 1 : 0;
  EXPECT_EQ(worker_rows, kRanksHere * kThreads) << report["threads"];
}

INSTANTIATE_TEST_SUITE_P(Modes, ThreadedSendrecv,
                         ::testing::Values(std::string("summary"), std::string("trace")),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace commlens::integration
