// The per-key GPU time of NCCL calls (device_span_stats.hpp).
#include "device_span_stats.hpp"

#include <gtest/gtest.h>

namespace {

using commlens::SqlValue;
using commlens::cuda::DeviceSpanStats;

std::int64_t value(const SqlValue& cell) {
  return std::get<std::int64_t>(cell);
}

TEST(DeviceSpanStats, SumsCountsAndExtremesPerFunctionCommunicatorBinAndPhase) {
  DeviceSpanStats stats;
  stats.add(40, 7, 20, 3, 1000);
  stats.add(40, 7, 20, 3, 3000);
  stats.add(40, 7, 20, 4, 500); // another phase
  stats.add(41, 7, 20, 3, 200); // another function
  auto rows = stats.take_rows(2);
  ASSERT_EQ(rows.size(), 3u);
  // rank, function, comm, bin, phase, count, total, min, max (keys in order)
  const std::vector<std::int64_t> first = {2, 40, 7, 20, 3, 2, 4000, 1000, 3000};
  for (std::size_t column = 0; column < first.size(); ++column) {
    EXPECT_EQ(value(rows[0][column]), first[column]) << column;
  }
  EXPECT_EQ(value(rows[1][4]), 4);
  EXPECT_EQ(value(rows[1][5]), 1);
  EXPECT_EQ(value(rows[2][1]), 41);
  EXPECT_TRUE(stats.take_rows(2).empty());
}

} // namespace
