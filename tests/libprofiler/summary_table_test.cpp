#include "commlens/profiler/summary_table.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using commlens::SummaryKey;
using commlens::SummaryTable;
using commlens::SummaryValues;

TEST(SizeBin, PowerOfTwoBinsHaveStableBounds) {
  EXPECT_EQ(commlens::size_bin_of(0), -1);
  EXPECT_EQ(commlens::size_bin_of(1), 0);
  EXPECT_EQ(commlens::size_bin_of(2), 1);
  EXPECT_EQ(commlens::size_bin_of(3), 1);
  EXPECT_EQ(commlens::size_bin_of(1024), 10);
  EXPECT_EQ(commlens::size_bin_of(2047), 10);
  EXPECT_EQ(commlens::size_bin_of(1ull << 40), 40);
}

TEST(SummaryTable, AggregatesCountBytesAndTimePerKey) {
  SummaryTable table(64);
  const SummaryKey send{3, 10, 0, 1, 0};
  const SummaryKey recv{4, 10, 0, 1, 0};
  table.add(send, 1024, 0, 50);
  table.add(send, 1500, 0, 20);
  table.add(recv, 0, 1024, 70);
  std::vector<std::pair<SummaryKey, SummaryValues>> rows;
  table.for_each([&](const SummaryKey& key, const SummaryValues& values) { rows.emplace_back(key, values); });
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& [key, values] : rows) {
    if (key == send) {
      EXPECT_EQ(values.count, 2u);
      EXPECT_EQ(values.bytes_sent, 2524u);
      EXPECT_EQ(values.ticks_total, 70u);
      EXPECT_EQ(values.ticks_min, 20u);
      EXPECT_EQ(values.ticks_max, 50u);
    } else {
      EXPECT_EQ(key, recv);
      EXPECT_EQ(values.count, 1u);
      EXPECT_EQ(values.bytes_recv, 1024u);
    }
  }
}

TEST(SummaryTable, CountsCallsItHasNoRoomFor) {
  SummaryTable table(4);
  for (std::int32_t peer = 0; peer < 6; ++peer) {
    table.add(SummaryKey{1, 0, 0, peer, 0}, 1, 0, 1);
  }
  EXPECT_EQ(table.overflowed(), 2u);
  std::size_t keys = 0;
  table.for_each([&](const SummaryKey&, const SummaryValues&) { ++keys; });
  EXPECT_EQ(keys, 4u);
}

} // namespace
