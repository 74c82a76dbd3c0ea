// Trace mode with the ranks encoding their own trace rows' pages at MPI_Finalize (the default):
// ring_pingpong under mpirun -np 4 leaves a merged database that took every rank's rows from the
// pages it encoded (run 'trace_pages_ranks'), holds exactly the calls the program makes, and costs
// each rank a profiler_overhead row 'trace_pages' counting its calls; with COMMLENS_RANK_PAGES=0
// the merge decodes every rank and the calls are the same.
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <string>

namespace commlens::integration {
namespace {

constexpr int kIterations = 300;

JobResult run_ring(const std::string& rank_pages) {
  return run_profiled_job({.command = {example_program("ring_pingpong"), std::to_string(kIterations)},
                           .mode = "trace",
                           .environment = {{"COMMLENS_RANK_PAGES", rank_pages}}});
}

std::int64_t calls_of(const Database& db, int rank, const std::string& function) {
  return db.scalar(
      "SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id WHERE f.name = '" +
      function + "' AND c.rank = " + std::to_string(rank));
}

// ring_pingpong.c's pattern: per iteration 3 MPI_Send (4 on ranks other than 0), 2 MPI_Recv
// (P + 1 on rank 0) and one MPI_Sendrecv.
void expect_ring_calls(const Database& db) {
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(calls_of(db, rank, "MPI_Send"), kIterations * (rank == 0 ? 3 : 4));
    EXPECT_EQ(calls_of(db, rank, "MPI_Recv"), kIterations * (rank == 0 ? kRanks + 1 : 2));
    EXPECT_EQ(calls_of(db, rank, "MPI_Sendrecv"), kIterations);
  }
}

TEST(TracePages, EveryRankEncodesItsPagesAndTheMergeCopiesThem) {
  const JobResult job = run_ring("1");
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT value = '0,1,2,3' FROM run WHERE key = 'trace_pages_ranks'"), 1);
  expect_ring_calls(db);
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::string of_rank = " WHERE rank = " + std::to_string(rank);
    EXPECT_EQ(db.scalar("SELECT count FROM profiler_overhead" + of_rank + " AND component = 'trace_pages'"),
              db.scalar("SELECT count(*) FROM mpi_calls" + of_rank));
    EXPECT_EQ(db.scalar("SELECT sum(calls) FROM timeline_tiles" + of_rank + " AND level = 0"),
              db.scalar("SELECT count(*) FROM mpi_calls" + of_rank));
  }
  EXPECT_EQ(db.integrity(), "ok");
  EXPECT_FALSE(std::filesystem::exists(job.output_directory / "rank-00000.sqlite-pages"))
      << "removed with the rank files after a complete merge";
}

TEST(TracePages, WithoutThemTheMergeDecodesEveryRank) {
  const JobResult job = run_ring("0");
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT value = '' FROM run WHERE key = 'trace_pages_ranks'"), 1);
  EXPECT_EQ(db.scalar("SELECT count(*) FROM profiler_overhead WHERE component = 'trace_pages'"), 0);
  expect_ring_calls(db);
}

// Ranks started with different settings (the odd ranks with the encoding off, set by a shell
// around the program) still meet in the same collectives at MPI_Finalize: the job ends, the even
// ranks' pages are copied and the odd ranks are decoded, with every call kept.
TEST(TracePages, RanksWithTheEncodingOffTakePartAndAreDecoded) {
  const JobResult job = run_profiled_job(
      {.command =
           {"sh", "-c",
            "[ $((OMPI_COMM_WORLD_RANK % 2)) = 1 ] && export COMMLENS_RANK_PAGES=0; exec \"$0\" \"$@\"",
            example_program("ring_pingpong"), std::to_string(kIterations)},
       .mode = "trace",
       .timeout_seconds = 60});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT value = '0,2' FROM run WHERE key = 'trace_pages_ranks'"), 1) << job.describe();
  expect_ring_calls(db);
  EXPECT_EQ(db.integrity(), "ok");
}

} // namespace
} // namespace commlens::integration
