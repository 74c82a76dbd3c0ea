// Which NVTX ranges mark training steps (step_ranges.hpp).
#include "step_ranges.hpp"

#include <gtest/gtest.h>

namespace {

using commlens::cuda::is_step_range;
using commlens::cuda::StepRangeNesting;

TEST(StepRanges, TheConfiguredNameAloneOrWithAStepNumberMarksAStep) {
  for (const char* name :
       {"step", "Step", "STEP", "step 12", "step#12", "step_3", "step-4", "step:5", "step7"}) {
    EXPECT_TRUE(is_step_range(name, "step")) << name;
  }
  for (const char* name :
       {"steps", "stepper", "step 1a", "step ", "step#", "forward", "ste", "train step", ""}) {
    EXPECT_FALSE(is_step_range(name, "step")) << name;
  }
  EXPECT_TRUE(is_step_range("iteration 3", "iteration"));
  EXPECT_FALSE(is_step_range("step", ""));
}

TEST(StepRanges, OnlyTheOutermostStepRangeOpensAndEndsAStep) {
  StepRangeNesting nesting;
  EXPECT_TRUE(nesting.pushed("step 1", "step"));
  EXPECT_FALSE(nesting.pushed("forward", "step"));
  EXPECT_FALSE(nesting.pushed("step", "step")); // a framework's step inside the program's
  EXPECT_FALSE(nesting.popped());
  EXPECT_FALSE(nesting.popped());
  EXPECT_TRUE(nesting.popped());
  EXPECT_TRUE(nesting.pushed("step 2", "step"));
  EXPECT_TRUE(nesting.popped());
}

TEST(StepRanges, APopWithoutItsPushEndsNothing) {
  StepRangeNesting nesting;
  EXPECT_FALSE(nesting.popped());
  EXPECT_TRUE(nesting.pushed("step", "step"));
  EXPECT_TRUE(nesting.popped());
}

} // namespace
