// early_wildcards: MPI_ANY_SOURCE/MPI_ANY_TAG receives posted right after MPI_Init see only the
// program's messages: the profiler sends nothing on MPI_COMM_WORLD at start-up (docs/design.md),
// where a message of its own would land in these receives. The run still stores every rank's clock
// offset, measured at MPI_Finalize.
#include "harness/job.hpp"

#include "harness/database.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

class EarlyWildcards : public ::testing::TestWithParam<std::string> {};

TEST_P(EarlyWildcards, WildcardReceivesAfterInitMatchOnlyTheProgramsMessages) {
  const JobResult job =
      run_profiled_job({.command = {example_program("early_wildcards")}, .mode = GetParam()});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  const std::string expected = "early_wildcards: " + std::to_string(3 * (kRanks - 1)) + " messages matched";
  EXPECT_NE(job.standard_output.find(expected), std::string::npos) << job.describe();
  Database db(job.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM ranks WHERE clock_offset_ns IS NOT NULL AND finalized = 1"),
            kRanks);
  EXPECT_EQ(db.scalar("SELECT clock_offset_ns FROM ranks WHERE rank = 0"), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, EarlyWildcards,
                         ::testing::Values(std::string("summary"), std::string("trace")),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace commlens::integration
