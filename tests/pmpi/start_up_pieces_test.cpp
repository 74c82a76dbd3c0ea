// The pieces that keep MPI_Init free of messages: the launcher's name for the job, taken only where
// the launcher's rank variable names this process, and the clock alignment measured at finalize
// carried back to MPI_Init along the drift.
#include "clock_alignment.hpp"
#include "launcher_job_key.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace commlens::pmpi {
namespace {

class LauncherEnvironment : public ::testing::Test {
protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name :
         {"PMIX_NAMESPACE", "PMIX_RANK", "OMPI_MCA_ess_base_jobid", "OMPI_COMM_WORLD_RANK"}) {
      unsetenv(name);
    }
  }
};

TEST_F(LauncherEnvironment, NamesTheJobByItsPmixNamespace) {
  setenv("PMIX_NAMESPACE", "prterun-node-4242@1", 1);
  setenv("PMIX_RANK", "3", 1);
  EXPECT_EQ(launcher_job_key(3), "pmix:prterun-node-4242@1");
}

TEST_F(LauncherEnvironment, FallsBackToOpenMpisJobId) {
  setenv("OMPI_MCA_ess_base_jobid", "1202388993", 1);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_EQ(launcher_job_key(0), "ompi:1202388993");
}

TEST_F(LauncherEnvironment, IgnoresVariablesThatNameAnotherRank) {
  // Inherited by a process the launcher did not start: it would join the wrong job.
  setenv("PMIX_NAMESPACE", "1202388993", 1);
  setenv("PMIX_RANK", "1", 1);
  EXPECT_EQ(launcher_job_key(0), "");
  setenv("PMIX_RANK", "1x", 1);
  EXPECT_EQ(launcher_job_key(1), "");
}

TEST_F(LauncherEnvironment, IsEmptyWithoutALauncher) {
  EXPECT_EQ(launcher_job_key(0), "");
}

TEST_F(LauncherEnvironment, KeepsTheRegistrysFieldsApart) {
  setenv("PMIX_NAMESPACE", "a job", 1);
  setenv("PMIX_RANK", "0", 1);
  EXPECT_EQ(launcher_job_key(0), "pmix:a_job");
}

TEST(ClockAlignment, CarriesTheOffsetAtFinalizeBackToInitAlongTheDrift) {
  // 100 s after init this rank is 5,000 ns ahead of rank 0 and runs 20 ns/s faster than it.
  const ClockSample at_finalize{5'000, 1'000 + 100'000'000'000, 30};
  const ClockAlignment alignment = alignment_at_init(at_finalize, 50, 1'000);
  EXPECT_DOUBLE_EQ(alignment.drift_ppb, 20.0);
  EXPECT_EQ(alignment.offset_ns, 5'000 - 2'000);
}

TEST(ClockAlignment, RankZeroIsItsOwnReference) {
  const ClockSample own{0, 123'456'789'000, 40};
  const ClockAlignment alignment = alignment_at_init(own, 40, 1'000);
  EXPECT_EQ(alignment.offset_ns, 0);
  EXPECT_DOUBLE_EQ(alignment.drift_ppb, 0.0);
}

TEST(ClockAlignment, MeasuresTheRateOfAClockRunningFastAgainstMonotonic) {
  // A scale 1% fast (ten times the error of a 5 ms calibration), readings taken 11 s ago.
  const TickConverter calibrated;
  const ClockReading now = read_clocks();
  const ClockReading since{now.ticks - static_cast<std::uint64_t>(11e9 / calibrated.ns_per_tick()),
                           now.ns - 11'000'000'000};
  const TickConverter fast(since.ticks, since.ns, calibrated.ns_per_tick() * 1.01);
  EXPECT_NEAR(static_cast<double>(rate_against_monotonic_ppb(fast, since)), 1e7, 5e5);
}

TEST(ClockAlignment, MeasuresNoRateOverShortRuns) {
  const TickConverter clock;
  EXPECT_EQ(rate_against_monotonic_ppb(clock, read_clocks()), 0) << "under 10 s, reading noise";
  EXPECT_EQ(rate_against_monotonic_ppb(clock, {}), 0) << "no readings of MPI_Init";
}

} // namespace
} // namespace commlens::pmpi
