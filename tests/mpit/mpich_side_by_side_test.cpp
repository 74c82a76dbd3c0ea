// libcommlens.so and examples/message_queues built against Debian's MPICH (a nested configure of
// this source tree, tests/mpit/CMakeLists.txt), run under MPICH's own launcher: the PMPI wrappers
// generated from MPICH's mpi.h profile the job exactly, and the MPI_T collector, finding no
// performance variable in a library built without them, says so in the run table and samples
// nothing (the collector degrades instead of failing).
#include "harness/call_table.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace commlens::integration {
namespace {

constexpr int kMessages = 64, kRanks = 2;
constexpr std::int64_t kIntBytes = 4;

const JobResult& mpich_job() {
  static const JobResult result = run_profiled_job(
      {.command = {COMMLENS_MPICH_EXAMPLE, "single", std::to_string(kMessages)},
       .mode = "trace",
       .ranks = kRanks,
       .hydra = JobSpec::HydraLaunch{.launcher = COMMLENS_MPICH_RUN, .preload = COMMLENS_MPICH_PRELOAD}});
  return result;
}

std::unique_ptr<Database> merged_database() {
  const JobResult& result = mpich_job();
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  if (result.exit_code != 0 || !std::filesystem::exists(result.merged_database())) {
    ADD_FAILURE() << "no merged database\n" << result.describe();
    return nullptr;
  }
  return std::make_unique<Database>(result.merged_database());
}

std::string run_value(const Database& db, const std::string& key) {
  const auto rows = db.query("SELECT value FROM run WHERE key = '" + key + "'");
  return rows.empty() || !rows[0][0].text ? "<missing>" : *rows[0][0].text;
}

// examples/message_queues.c on two ranks: rank 0 sends 2 x 64 ints to rank 1, which receives the
// first 64 with MPI_Recv and pre-posts the second 64 with MPI_Irecv; three barriers on both.
CallTable expected_calls() {
  CallTable table;
  table.add(0, "MPI_Send", kWorld, 1, kIntBytes, 0, 2 * kMessages);
  table.add(1, "MPI_Recv", kWorld, 0, 0, kIntBytes, kMessages);
  table.add(1, "MPI_Irecv", kWorld, 0, 0, kIntBytes, kMessages);
  table.add(1, "MPI_Waitall", kNoCommunicator, kNoPeer, 0, 0, 1);
  for (int rank = 0; rank < kRanks; ++rank)
    table.add(rank, "MPI_Barrier", kWorld, kNoPeer, 0, 0, 3);
  return table;
}

TEST(MpichSideBySide, RunsTheQueueExampleAndMergesOneIntactDatabase) {
  auto db = merged_database();
  if (!db)
    return;
  EXPECT_EQ(db->integrity(), "ok");
  EXPECT_EQ(db->scalar("SELECT count(DISTINCT rank) FROM mpi_calls"), kRanks);
}

TEST(MpichSideBySide, StoresExactCallsAndBytesThroughTheWrappersGeneratedFromMpichsHeader) {
  auto db = merged_database();
  if (!db)
    return;
  const std::set<std::string> functions = {"MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Waitall", "MPI_Barrier"};
  EXPECT_EQ(difference(expected_calls(), read_call_stats(*db, functions)), "");
  EXPECT_EQ(difference(expected_calls(), read_traced_calls(*db, functions)), "");
}

TEST(MpichSideBySide, RecordsThatMpichHasNoPerformanceVariablesAndSamplesNothing) {
  auto db = merged_database();
  if (!db)
    return;
  EXPECT_EQ(run_value(*db, "mpit_pvars_found"), "0");
  EXPECT_EQ(run_value(*db, "mpit_sampling"), "none: the MPI library exposes no performance variables");
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvars"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_samples"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_handles"), 0);
  // The cvar snapshot does not depend on pvars: MPICH's own control variables are there.
  EXPECT_GT(db->scalar("SELECT count(*) FROM cvars WHERE rank = 0 AND name LIKE 'MPIR_CVAR_%'"), 100);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cvars WHERE name = 'MPIR_CVAR_ASYNC_PROGRESS'"), kRanks);
}

} // namespace
} // namespace commlens::integration
