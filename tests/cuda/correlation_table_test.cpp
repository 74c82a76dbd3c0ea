// How the CUPTI collector ties a buffer's records to the MPI or NCCL call that issued them
// (correlation_table.hpp), with synthetic records: an NCCL call pushes its call id, CUPTI links the
// launch's correlation id to it, and the kernel carrying that correlation id gets the call.
#include "correlation_table.hpp"

#include <gtest/gtest.h>

namespace commlens::cuda {
namespace {

// Call ids as the profiler gives them: rank << 46 | thread << 36 | sequence.
constexpr std::uint64_t kAllReduceCall = (std::uint64_t{1} << 46) | 17;
constexpr std::uint64_t kGroupEndCall = (std::uint64_t{1} << 46) | 21;

CudaKernel kernel(std::uint32_t correlation_id, std::uint64_t start_ns, std::uint64_t end_ns) {
  CudaKernel record;
  record.correlation_id = correlation_id;
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  record.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  return record;
}

TEST(CorrelationTable, KernelsLaunchedInsideACallCarryItsId) {
  CorrelationTable table;
  table.add(ExternalKind::MpiCall, 100, kAllReduceCall); // cuLaunchKernelEx inside ncclAllReduce
  table.add(ExternalKind::MpiCall, 101, kGroupEndCall);  // the launch inside ncclGroupEnd
  std::vector<CudaKernel> fresh{kernel(100, 10, 50), kernel(101, 60, 90), kernel(102, 95, 99)};
  std::vector<CudaKernel> parked;
  const auto ready = take_ready(fresh, parked, table, false);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(call_of(table, ready[0]), kAllReduceCall);
  EXPECT_EQ(call_of(table, ready[1]), kGroupEndCall);
  ASSERT_EQ(parked.size(), 1u) << "a kernel whose link has not arrived waits";
  EXPECT_EQ(parked[0].correlation_id, 102u);
}

TEST(CorrelationTable, AParkedKernelGetsItsLinkFromTheNextBufferOrIsStoredOutsideAnyCall) {
  CorrelationTable table;
  std::vector<CudaKernel> fresh{kernel(7, 10, 20)};
  std::vector<CudaKernel> parked;
  EXPECT_TRUE(take_ready(fresh, parked, table, false).empty());
  table.add(ExternalKind::MpiCall, 7, kAllReduceCall); // the link came in the next buffer
  std::vector<CudaKernel> next{kernel(8, 30, 40)};
  const auto ready = take_ready(next, parked, table, false);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(call_of(table, ready[0]), kAllReduceCall);
  ASSERT_EQ(parked.size(), 1u);
  // One buffer later it is stored anyway, as outside any call.
  std::vector<CudaKernel> none;
  const auto late = take_ready(none, parked, table, false);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(call_of(table, late[0]), 0u);
  EXPECT_TRUE(parked.empty());
}

TEST(CorrelationTable, TheFinalFlushTakesEverythingAndIpcMarkersAreNoCalls) {
  CorrelationTable table;
  table.add(ExternalKind::IpcCopy, 5, 1);
  EXPECT_TRUE(table.knows(5));
  EXPECT_TRUE(table.is_ipc_copy(5));
  EXPECT_EQ(table.mpi_call(5), 0u);
  CudaCopy copy;
  copy.correlation_id = 9;         // the driver call: no link
  copy.runtime_correlation_id = 5; // the runtime call around it: the IPC marker
  table.add(ExternalKind::MpiCall, 6, kGroupEndCall);
  std::vector<CudaCopy> fresh{copy};
  std::vector<CudaCopy> parked;
  const auto ready = take_ready(fresh, parked, table, false);
  ASSERT_EQ(ready.size(), 1u) << "linked through the runtime call";
  EXPECT_EQ(call_of(table, ready[0]), 0u);
  std::vector<CudaKernel> unlinked{kernel(77, 1, 2)};
  std::vector<CudaKernel> waiting;
  EXPECT_EQ(take_ready(unlinked, waiting, table, true).size(), 1u);
  EXPECT_TRUE(waiting.empty());
}

TEST(CorrelationTable, ACopyFindsItsCallThroughTheRuntimeCallWhenTheDriverCallHasNone) {
  CorrelationTable table;
  table.add(ExternalKind::MpiCall, 40, kAllReduceCall); // cudaMemcpyAsync (runtime API)
  CudaCopy copy;
  copy.correlation_id = 41; // cuMemcpyAsync beneath it
  copy.runtime_correlation_id = 40;
  EXPECT_TRUE(linked(table, copy));
  EXPECT_EQ(call_of(table, copy), kAllReduceCall);
}

} // namespace
} // namespace commlens::cuda
