// When kernels are recorded one by one (kernel_schedule.hpp): never by default, in the kernel
// steps and the time between them, or always.
#include "kernel_schedule.hpp"

#include <gtest/gtest.h>

namespace {

using commlens::KernelRecording;
using commlens::cuda::KernelSchedule;

constexpr int kStep = 2;
constexpr int kBetweenSteps = 3;

TEST(KernelSchedule, StepsRecordsOnlyTheKernelSteps) {
  KernelSchedule schedule(KernelRecording::Steps, {{3, 4}});
  EXPECT_FALSE(schedule.recording());
  std::vector<bool> per_step;
  for (int step = 1; step <= 6; ++step) {
    per_step.push_back(schedule.phase_begun(kStep));
  }
  EXPECT_EQ(per_step, (std::vector<bool>{false, false, true, true, false, false}));
  EXPECT_EQ(schedule.steps(), 6u);
}

TEST(KernelSchedule, TheGapAfterAKernelStepIsRecordedOnlyWhenTheNextStepIsOne) {
  KernelSchedule schedule(KernelRecording::Steps, {{2, 3}});
  EXPECT_FALSE(schedule.phase_begun(kStep));         // step 1
  EXPECT_FALSE(schedule.phase_begun(kBetweenSteps)); // before step 2
  EXPECT_TRUE(schedule.phase_begun(kStep));          // step 2
  EXPECT_TRUE(schedule.phase_begun(kBetweenSteps));  // between 2 and 3: both kernel steps
  EXPECT_TRUE(schedule.phase_begun(kStep));          // step 3
  EXPECT_FALSE(schedule.phase_begun(kBetweenSteps)); // after the last kernel step
  EXPECT_FALSE(schedule.phase_begun(kStep));         // step 4
}

TEST(KernelSchedule, SeveralSpansEachOpenTheirSteps) {
  KernelSchedule schedule(KernelRecording::Steps, {{1, 1}, {4, 5}});
  std::vector<bool> per_step;
  for (int step = 1; step <= 6; ++step) {
    per_step.push_back(schedule.phase_begun(kStep));
  }
  EXPECT_EQ(per_step, (std::vector<bool>{true, false, false, true, true, false}));
}

TEST(KernelSchedule, OffRecordsNothingAndAllEverythingWhateverTheSteps) {
  KernelSchedule off(KernelRecording::Off, {{1, 10}});
  KernelSchedule all(KernelRecording::All, {{6, 8}});
  EXPECT_FALSE(off.recording());
  EXPECT_TRUE(all.recording());
  for (int step = 1; step <= 10; ++step) {
    EXPECT_FALSE(off.phase_begun(kStep));
    EXPECT_TRUE(all.phase_begun(kStep));
  }
  EXPECT_EQ(off.steps(), 10u);
}

TEST(KernelSchedule, DescribesWhatItRecords) {
  EXPECT_EQ(KernelSchedule(KernelRecording::Steps, {{6, 8}, {100, 100}}).describe(),
            "steps 6-8,100 (COMMLENS_KERNELS=steps)");
  EXPECT_EQ(KernelSchedule(KernelRecording::All, {{6, 8}}).describe(), "every kernel (COMMLENS_KERNELS=all)");
  EXPECT_EQ(KernelSchedule(KernelRecording::Off, {{6, 8}}).describe(), "none (COMMLENS_KERNELS=off)");
}

} // namespace
