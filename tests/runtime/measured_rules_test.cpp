// What `commlens tune` makes of its measurements, from synthetic timings.
#include "measured_rules.hpp"

#include <gtest/gtest.h>

namespace {

using namespace commlens::runtime::tuning;

constexpr MeasuredShape kFourGpus{GpuCount::More, false, false};

TEST(MeasuredRules, FastestPerSizeWithRunsMergedIntoThresholds) {
  const std::vector<Timing> timings = {
      {8, Algorithm::OneShot, 0, 10},       {8, Algorithm::TwoShot, 0, 20},
      {1024, Algorithm::OneShot, 0, 12},    {1024, Algorithm::TwoShot, 0, 21},
      {65536, Algorithm::OneShot, 0, 40},   {65536, Algorithm::TwoShot, 0, 30},
      {1 << 20, Algorithm::TwoShot, 0, 90}, {1 << 20, Algorithm::OneShot, 0, 200},
  };
  const std::vector<Rule> rules = rules_from_timings(timings, kFourGpus);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].algorithm, Algorithm::OneShot);
  EXPECT_EQ(rules[0].max_bytes, 1024u);
  EXPECT_EQ(rules[0].why, "fastest measured from 8 B to 1 KiB");
  EXPECT_EQ(rules[1].algorithm, Algorithm::TwoShot);
  EXPECT_EQ(rules[1].max_bytes, std::nullopt); // the largest run covers everything above too
  for (const Rule& rule : rules) {
    EXPECT_EQ(rule.gpus, GpuCount::More);
    EXPECT_EQ(rule.ranks_share_gpu, false);
    EXPECT_EQ(rule.in_place, false);
  }
}

TEST(MeasuredRules, AWinnerThatComesBackStartsANewRule) {
  const std::vector<Timing> timings = {
      {8, Algorithm::TwoShot, 0, 1},  {8, Algorithm::OneShot, 0, 2},  {16, Algorithm::OneShot, 0, 1},
      {16, Algorithm::TwoShot, 0, 2}, {32, Algorithm::TwoShot, 0, 1}, {32, Algorithm::OneShot, 0, 2},
  };
  const std::vector<Rule> rules = rules_from_timings(timings, kFourGpus);
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].max_bytes, 8u);
  EXPECT_EQ(rules[1].max_bytes, 16u);
  EXPECT_EQ(rules[2].algorithm, Algorithm::TwoShot);
}

TEST(MeasuredRules, StripedRulesKeepTheirShareAndTiesGoToTheFirstListed) {
  const std::vector<Timing> timings = {
      {8, Algorithm::TwoShot, 0, 5},
      {8, Algorithm::OneShot, 0, 5},
      {1 << 30, Algorithm::OneShot, 0, 3000},
      {1 << 30, Algorithm::OneShotStriped, 13, 2500},
  };
  const std::vector<Rule> rules = rules_from_timings(timings, {GpuCount::Two, false, false});
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].algorithm, Algorithm::OneShot);
  EXPECT_EQ(rules[1].algorithm, Algorithm::OneShotStriped);
  EXPECT_EQ(rules[1].host_percent, 13u);
}

TEST(MeasuredRules, EachSizeTakesTheSlowestRanksMedian) {
  const std::vector<CallDuration> calls = {// 8 B: rank 0's median 10 (one slow outlier), rank 1's 12.
                                           {8, 0, 10},
                                           {8, 0, 9},
                                           {8, 0, 500},
                                           {8, 1, 12},
                                           {8, 1, 11},
                                           {8, 1, 13},
                                           // 1 KiB: one rank only.
                                           {1024, 0, 40}};
  const std::vector<Timing> timings = timings_from_calls(calls, Algorithm::TwoShot, 0);
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(timings[0].bytes, 8u);
  EXPECT_EQ(timings[0].median_ns, 12);
  EXPECT_EQ(timings[0].algorithm, Algorithm::TwoShot);
  EXPECT_EQ(timings[1].bytes, 1024u);
  EXPECT_EQ(timings[1].median_ns, 40);
}

TEST(MeasuredRules, NoTimingsNoRules) {
  EXPECT_TRUE(rules_from_timings({}, kFourGpus).empty());
}

} // namespace
