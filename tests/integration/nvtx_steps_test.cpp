// nvtx_steps: training steps marked by NVTX ranges, profiled without the CUDA collector
// (COMMLENS_COLLECTORS=pmpi,mpit,nvtx): libcommlens.so is then NVTX's tool itself
// (collectors/nvtx_tool), every "step" range of the default domain opens a phase, as
// MPI_Pcontrol(2) would, and every range of that domain is recorded. Expected values mirror the pattern
// documented in examples/nvtx_steps.c: a framework's step range nested in the program's and a step range of
// another domain mark none.
#include "harness/database.hpp"
#include "harness/job.hpp"
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace commlens::integration {
namespace {

constexpr int kSteps = 6;

using StepRun = std::tuple<std::string, std::string>; // mode, COMMLENS_STEP_RANGE

class NvtxSteps : public ::testing::TestWithParam<std::string> {
protected:
  std::unique_ptr<Database> merged(const std::string& step_range = "step") const {
    static std::map<StepRun, JobResult> cache;
    const StepRun key{GetParam(), step_range};
    auto found = cache.find(key);
    if (found == cache.end()) {
      found =
          cache
              .emplace(key,
                       run_profiled_job({.command = {example_program("nvtx_steps"), std::to_string(kSteps)},
                                         .mode = GetParam(),
                                         .environment = {{"COMMLENS_COLLECTORS", "pmpi,mpit,nvtx"},
                                                         {"COMMLENS_STEP_RANGE", step_range}}}))
              .first;
    }
    const JobResult& result = found->second;
    EXPECT_EQ(result.exit_code, 0) << result.describe();
    if (!std::filesystem::exists(result.merged_database())) {
      ADD_FAILURE() << "no merged database\n" << result.describe();
      return nullptr;
    }
    return std::make_unique<Database>(result.merged_database());
  }
};

// Calls of one function per rank in the phases a step range opened (level 2), or outside them.
std::string calls_in_steps(const std::string& function, int rank, bool in_steps) {
  return "SELECT coalesce(sum(s.count), 0) FROM call_stats s JOIN functions f ON f.id = s.function_id "
         "WHERE f.name = '" +
         function + "' AND s.rank = " + std::to_string(rank) + " AND s.phase " + (in_steps ? "" : "NOT ") +
         "IN (SELECT phase FROM phases p WHERE p.rank = s.rank AND p.pcontrol_level = 2)";
}

TEST_P(NvtxSteps, OpensAPhaseForEveryStepRangeAndClosesItAtItsPop) {
  auto db = merged();
  if (!db)
    return;
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string where = "FROM phases WHERE rank = " + std::to_string(rank);
    EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND pcontrol_level = 2"), kSteps) << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND pcontrol_level = 3"), kSteps) << "rank " << rank;
  }
  EXPECT_EQ(db->scalar(
                "SELECT count(*) FROM run WHERE key = 'step_marks' AND value LIKE 'NVTX ranges named step%'"),
            1);
}

TEST_P(NvtxSteps, EachStepHoldsItsOwnCallsAndNoneOfThoseBetweenSteps) {
  auto db = merged();
  if (!db)
    return;
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(db->scalar(calls_in_steps("MPI_Allreduce", rank, true)), 2 * kSteps) << "rank " << rank;
    EXPECT_EQ(db->scalar(calls_in_steps("MPI_Allreduce", rank, false)), 0) << "rank " << rank;
    EXPECT_EQ(db->scalar(calls_in_steps("MPI_Barrier", rank, true)), 0) << "rank " << rank;
    EXPECT_EQ(db->scalar(calls_in_steps("MPI_Barrier", rank, false)), kSteps + 1) << "rank " << rank;
  }
}

TEST_P(NvtxSteps, RecordsEveryRangeOfTheDefaultDomainAndNoneOfAnother) {
  auto db = merged();
  if (!db)
    return;
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string where = "FROM nvtx_ranges WHERE rank = " + std::to_string(rank);
    // Per step: "step N", "forward", "backward" and the framework's "step" inside it.
    EXPECT_EQ(db->scalar("SELECT count(*) " + where), 4 * kSteps) << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND domain IS NULL AND end_ns >= start_ns"),
              4 * kSteps)
        << "rank " << rank;
    for (const char* name : {"forward", "backward", "step"})
      EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND name = '" + name + "'"), kSteps)
          << "rank " << rank << " " << name;
    EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND name LIKE 'step %'"), kSteps) << "rank " << rank;
    // A forward range lies inside its step's range.
    EXPECT_EQ(db->scalar("SELECT count(*) " + where + " AND name = 'forward' AND EXISTS (SELECT 1 FROM " +
                         "nvtx_ranges s WHERE s.rank = nvtx_ranges.rank AND s.name LIKE 'step %' AND " +
                         "s.start_ns <= nvtx_ranges.start_ns AND nvtx_ranges.end_ns <= s.end_ns)"),
              kSteps)
        << "rank " << rank;
  }
}

TEST_P(NvtxSteps, MarksNoStepWhenStepRangesAreTurnedOff) {
  auto db = merged("none");
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM phases WHERE pcontrol_level IS NOT NULL"), 0);
  EXPECT_EQ(
      db->scalar("SELECT coalesce(sum(count), 0) FROM call_stats s JOIN functions f ON f.id = s.function_id "
                 "WHERE f.name = 'MPI_Allreduce'"),
      2 * kSteps * kRanks);
}

INSTANTIATE_TEST_SUITE_P(Modes, NvtxSteps, ::testing::Values(std::string("summary"), std::string("trace")),
                         mode_test_name);

} // namespace
} // namespace commlens::integration
