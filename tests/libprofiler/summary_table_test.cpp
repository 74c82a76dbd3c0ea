#include "commlens/profiler/summary_table.hpp"

#include <gtest/gtest.h>

#include <optional>
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

TEST(SummaryTable, GrowsSoThatEveryCallOnEveryNewKeyIsCounted) {
  SummaryTable table(64);
  constexpr std::uint32_t kKeys = 20000; // a communicator per step: new keys for ever
  for (int round = 0; round < 2; ++round) {
    for (std::uint32_t communicator = 0; communicator < kKeys; ++communicator) {
      EXPECT_TRUE(table.add(SummaryKey{7, -1, 0, -1, communicator}, 0, 0, 5));
    }
  }
  EXPECT_EQ(table.overflowed(), 0u);
  EXPECT_GE(table.capacity(), kKeys);
  std::size_t keys = 0;
  std::uint64_t calls = 0;
  table.for_each([&](const SummaryKey& key, const SummaryValues& values) {
    ++keys;
    calls += values.count;
    EXPECT_EQ(values.count, 2u) << key.communicator_index;
    EXPECT_EQ(values.ticks_total, 10u) << key.communicator_index;
  });
  EXPECT_EQ(keys, kKeys);
  EXPECT_EQ(calls, 2u * kKeys);
}

TEST(SummaryTable, KeepsTheTotalsOfAKeyAcrossGrowth) {
  SummaryTable table(4);
  const SummaryKey first{1, 3, 0, 2, 0};
  table.add(first, 8, 0, 40);
  for (std::int32_t peer = 10; peer < 100; ++peer) {
    table.add(SummaryKey{2, 0, 0, peer, 0}, 1, 0, 1);
  }
  table.add(first, 9, 0, 30);
  std::optional<SummaryValues> found;
  table.for_each([&](const SummaryKey& key, const SummaryValues& values) {
    if (key == first) {
      found = values;
    }
  });
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->count, 2u);
  EXPECT_EQ(found->bytes_sent, 17u);
  EXPECT_EQ(found->ticks_min, 30u);
  EXPECT_EQ(found->ticks_max, 40u);
}

TEST(SummaryTable, CountsCallsBeyondItsLargestSize) {
  SummaryTable table(4, 8); // at most 8 slots, three quarters of them used: 6 keys
  for (std::int32_t peer = 0; peer < 10; ++peer) {
    table.add(SummaryKey{1, 0, 0, peer, 0}, 1, 0, 1);
  }
  EXPECT_EQ(table.overflowed(), 4u);
  std::size_t keys = 0;
  table.for_each([&](const SummaryKey&, const SummaryValues&) { ++keys; });
  EXPECT_EQ(keys, 6u);
}

} // namespace
