// Trace mode under a flood of MPI_Iprobe calls on every rank, with buffers of 1,024 records: the
// calls come far faster than the writer stores them, so buffers fill many times over. A full buffer
// makes the calling thread wait for the writer (back-pressure), so the trace holds every call
// exactly and nothing is dropped (the waits are counted in profiler_overhead's 'trace_wait' row).
// Before back-pressure, a full buffer dropped records (counted in ranks.dropped_events, but lost).
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

constexpr long kCalls = 300000;

TEST(TraceFlood, EveryIprobeIsStoredAndNoneIsDropped) {
  const JobResult job =
      run_profiled_job({.command = {example_program("iprobe_flood"), std::to_string(kCalls)},
                        .mode = "trace",
                        .environment = {{"COMMLENS_BUFFER_EVENTS", "1024"}},
                        .ranks = 2});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  Database db(job.merged_database());
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                        "WHERE f.name = 'MPI_Iprobe' AND c.rank = " +
                        std::to_string(rank)),
              kCalls);
    EXPECT_EQ(db.scalar("SELECT dropped_events FROM ranks WHERE rank = " + std::to_string(rank)), 0);
  }
  EXPECT_EQ(job.standard_error.find("data lost"), std::string::npos) << job.standard_error;
}

} // namespace
} // namespace commlens::integration
