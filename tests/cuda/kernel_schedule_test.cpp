// When kernels are recorded one by one (kernel_schedule.hpp): steps, the time between them, the
// rate limit before the first step, and the modes that ignore both.
#include "kernel_schedule.hpp"

#include <gtest/gtest.h>

namespace {

using commlens::KernelRecording;
using commlens::cuda::KernelSchedule;

constexpr int kStep = 2;
constexpr int kBetweenSteps = 3;

TEST(KernelSchedule, AutoRecordsBeforeTheFirstStepThenOnlyTheKernelSteps) {
  KernelSchedule schedule(KernelRecording::Auto, {{3, 4}}, 2000);
  EXPECT_TRUE(schedule.recording());
  std::vector<bool> per_step;
  for (int step = 1; step <= 6; ++step) {
    per_step.push_back(schedule.phase_begun(kStep));
  }
  EXPECT_EQ(per_step, (std::vector<bool>{false, false, true, true, false, false}));
  EXPECT_EQ(schedule.steps(), 6u);
}

TEST(KernelSchedule, TheGapAfterAKernelStepIsRecordedOnlyWhenTheNextStepIsOne) {
  KernelSchedule schedule(KernelRecording::Auto, {{2, 3}}, 2000);
  EXPECT_FALSE(schedule.phase_begun(kStep));        // step 1
  EXPECT_FALSE(schedule.phase_begun(kBetweenSteps)); // before step 2
  EXPECT_TRUE(schedule.phase_begun(kStep));         // step 2
  EXPECT_TRUE(schedule.phase_begun(kBetweenSteps));  // between 2 and 3: both kernel steps
  EXPECT_TRUE(schedule.phase_begun(kStep));         // step 3
  EXPECT_FALSE(schedule.phase_begun(kBetweenSteps)); // after the last kernel step
  EXPECT_FALSE(schedule.phase_begun(kStep));        // step 4
}

TEST(KernelSchedule, SeveralSpansEachOpenTheirSteps) {
  KernelSchedule schedule(KernelRecording::Auto, {{1, 1}, {4, 5}}, 0);
  std::vector<bool> per_step;
  for (int step = 1; step <= 6; ++step) {
    per_step.push_back(schedule.phase_begun(kStep));
  }
  EXPECT_EQ(per_step, (std::vector<bool>{true, false, false, true, true, false}));
}

TEST(KernelSchedule, AHighKernelRateBeforeAnyStepStopsTheRecordsAfterTwoSeconds) {
  KernelSchedule schedule(KernelRecording::Auto, {{6, 8}}, 2000);
  EXPECT_TRUE(schedule.kernels_arrived(30000, 1.0)); // one burst is not judged alone
  EXPECT_FALSE(schedule.kernels_arrived(30000, 1.0));
  EXPECT_DOUBLE_EQ(schedule.stopping_rate(), 30000.0);
  // Steps marked later still get their kernel steps.
  for (int step = 1; step <= 5; ++step) {
    EXPECT_FALSE(schedule.phase_begun(kStep));
  }
  EXPECT_TRUE(schedule.phase_begun(kStep));
}

TEST(KernelSchedule, ALowKernelRateKeepsEveryKernelRecorded) {
  KernelSchedule schedule(KernelRecording::Auto, {{6, 8}}, 2000);
  for (int second = 0; second < 10; ++second) {
    EXPECT_TRUE(schedule.kernels_arrived(1999, 1.0));
  }
  EXPECT_EQ(schedule.stopping_rate(), 0.0);
}

TEST(KernelSchedule, TheRateIsNotJudgedOnceStepsAreMarked) {
  KernelSchedule schedule(KernelRecording::Auto, {{1, 100}}, 2000);
  EXPECT_TRUE(schedule.phase_begun(kStep));
  EXPECT_TRUE(schedule.kernels_arrived(1000000, 3.0));
}

TEST(KernelSchedule, AZeroRateLimitNeverStopsTheRecords) {
  KernelSchedule schedule(KernelRecording::Auto, {{6, 8}}, 0);
  EXPECT_TRUE(schedule.kernels_arrived(1000000, 3.0));
}

TEST(KernelSchedule, StepsRecordsOnlyTheKernelSteps) {
  KernelSchedule schedule(KernelRecording::Steps, {{2, 3}}, 2000);
  EXPECT_FALSE(schedule.recording());
  EXPECT_FALSE(schedule.kernels_arrived(10, 3.0));
  std::vector<bool> per_step;
  for (int step = 1; step <= 4; ++step) {
    per_step.push_back(schedule.phase_begun(kStep));
  }
  EXPECT_EQ(per_step, (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(schedule.describe(), "steps 2-3 (COMMLENS_KERNELS=steps)");
}

TEST(KernelSchedule, AllAndOffIgnoreStepsAndRates) {
  KernelSchedule all(KernelRecording::All, {{6, 8}}, 2000);
  KernelSchedule off(KernelRecording::Off, {{6, 8}}, 2000);
  for (int step = 1; step <= 10; ++step) {
    EXPECT_TRUE(all.phase_begun(kStep));
    EXPECT_FALSE(off.phase_begun(kStep));
  }
  EXPECT_TRUE(all.kernels_arrived(1000000, 3.0));
  EXPECT_FALSE(off.recording());
}

TEST(KernelSchedule, DescribesWhatItRecords) {
  EXPECT_EQ(KernelSchedule(KernelRecording::Auto, {{6, 8}, {100, 100}}, 2000).describe(),
            "steps 6-8,100, and every kernel before the first step while at most 2000 are launched a "
            "second (COMMLENS_KERNELS=auto)");
  EXPECT_EQ(KernelSchedule(KernelRecording::All, {{6, 8}}, 2000).describe(), "every kernel (COMMLENS_KERNELS=all)");
  EXPECT_EQ(KernelSchedule(KernelRecording::Off, {{6, 8}}, 2000).describe(), "none (COMMLENS_KERNELS=off)");
}

} // namespace
