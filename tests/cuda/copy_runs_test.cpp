// Summary mode's runs of copies (collectors/cupti/copy_runs.hpp): which copies become one row, and
// that the row counts every copy and byte of its run.
#include "copy_runs.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace commlens::cuda {
namespace {

constexpr std::uint64_t kGap = 1000;

// An untimed device-to-device copy of `bytes` by `thread` from `start` to `start + 10`.
CopyCall copy_at(std::uint64_t start, std::uint64_t bytes = 100, std::uint32_t thread = 1) {
  CopyCall call;
  call.copy.start_ns = start;
  call.copy.end_ns = start + 10;
  call.copy.src_kind = MemoryKind::Device;
  call.copy.dst_kind = MemoryKind::Device;
  call.copy.direction = CopyDirection::DtoD;
  call.copy.bytes = bytes;
  call.copy.stream = 7;
  call.thread = thread;
  return call;
}

TEST(CopyRuns, CopiesOfOneRouteBackToBackBecomeOneRowWithTheirCountAndBytes) {
  const auto merged = merge_copy_runs({copy_at(0, 100), copy_at(20, 200), copy_at(40, 300)}, kGap);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].copy.copies, 3u);
  EXPECT_EQ(merged[0].copy.bytes, 600u);
  EXPECT_EQ(merged[0].copy.start_ns, 0u);
  EXPECT_EQ(merged[0].copy.end_ns, 50u);
}

TEST(CopyRuns, APauseLongerThanTheGapStartsANewRun) {
  const auto merged = merge_copy_runs({copy_at(0), copy_at(10 + kGap), copy_at(20 + 2 * kGap + 1)}, kGap);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].copy.copies, 2u);
  EXPECT_EQ(merged[1].copy.copies, 1u);
  EXPECT_EQ(merged[1].copy.start_ns, 20 + 2 * kGap + 1);
}

TEST(CopyRuns, EveryDifferenceOfRouteOrPlaceStartsANewRun) {
  std::vector<CopyCall> calls{copy_at(0)};
  auto differing = [&](auto change) {
    CopyCall call = copy_at(20 * calls.size());
    change(call);
    calls.push_back(call);
    calls.push_back(copy_at(20 * calls.size())); // and back: a new run again
  };
  differing([](CopyCall& c) { c.call_id = 5; });
  differing([](CopyCall& c) { c.phase = 2; });
  differing([](CopyCall& c) { c.copy.dst_kind = MemoryKind::Pinned; });
  differing([](CopyCall& c) { c.copy.direction = CopyDirection::DtoH; });
  differing([](CopyCall& c) { c.copy.stream = 8; });
  differing([](CopyCall& c) { c.copy.device = 1; });
  differing([](CopyCall& c) { c.copy.src_device = 1; });
  differing([](CopyCall& c) { c.copy.dst_device = 1; });
  differing([](CopyCall& c) { c.copy.touches_ipc_mapping = true; });
  const std::size_t made = calls.size();
  const auto merged = merge_copy_runs(std::move(calls), kGap);
  EXPECT_EQ(merged.size(), made);
}

TEST(CopyRuns, TimedCopiesStayRowsOfTheirOwnAndThreadsKeepTheirRuns) {
  CopyCall timed = copy_at(15, 1000);
  timed.gpu_timed = true;
  const auto merged = merge_copy_runs(
      {copy_at(0, 1, 1), copy_at(5, 2, 2), timed, copy_at(20, 4, 1), copy_at(25, 8, 2)}, kGap);
  ASSERT_EQ(merged.size(), 3u);
  std::uint64_t copies = 0, bytes = 0;
  for (const CopyCall& call : merged) {
    copies += call.copy.copies;
    bytes += call.copy.bytes;
  }
  EXPECT_EQ(copies, 5u);
  EXPECT_EQ(bytes, 1015u);
  EXPECT_EQ(merged[0].copy.bytes, 5u) << "thread 1's two copies, across thread 2's and the timed one";
  EXPECT_EQ(merged[1].copy.bytes, 10u);
  EXPECT_TRUE(merged[2].gpu_timed);
  EXPECT_EQ(merged[2].copy.copies, 1u);
}

} // namespace
} // namespace commlens::cuda
