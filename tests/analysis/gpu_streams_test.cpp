// The viewer's GPU lanes and kernel names, on a two-rank database whose rows the test states:
// which stream each kernel, copy, memset and NCCL call's GPU span belongs to, and how an NCCL
// call's stream handle is matched to CUPTI's stream id (through a kernel tied to the call, or one
// lying inside its span).
#include "commlens/analysis/gpu_streams.hpp"
#include "commlens/analysis/kernel_names.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

namespace commlens::test {
namespace {

constexpr std::int64_t kRank1 = std::int64_t{1} << 46;

// Rank 0, GPU 0: a compute kernel on stream 7; ncclAllReduce call 100 (handle 0xA0) whose kernel,
// tied to it, ran on stream 19, its span [1000, 1500); a memset on stream 16, a copy on stream 17.
// Rank 1, GPU 1: ncclAllReduce call kRank1 + 200 (handle 0xB0) whose kernel, not tied (CUPTI came
// late), ran on stream 21 inside its span [2000, 2600); call kRank1 + 201 on the default stream (0)
// with a span and no kernel; call kRank1 + 202 without an nccl_calls row; a synchronisation.
void fill_gpu_run(TestDatabase& database) {
  database.execute(R"sql(
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, finalized) VALUES
  (0, 'node-a', 100, 0, 100000, 1), (1, 'node-a', 101, 0, 100000, 1);
INSERT INTO functions (id, name, family) VALUES (5, 'nccl:AllReduce', 'nccl_collective');
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer,
                       comm_id, implementation, phase) VALUES
  (100, 0, 0, 5, 900, 950, 64, 64, -1, 9, 0, 0),
  (70368744177864, 1, 0, 5, 1900, 1950, 64, 64, -1, 9, 0, 0),
  (70368744177865, 1, 0, 5, 3000, 3050, 64, 64, -1, 9, 0, 0),
  (70368744177866, 1, 0, 5, 4000, 4050, 64, 64, -1, 9, 0, 0);
INSERT INTO nccl_calls (call_id, rank, stream, group_depth) VALUES
  (100, 0, 160, 0), (70368744177864, 1, 176, 0), (70368744177865, 1, 0, 0);
INSERT INTO device_spans (call_id, rank, start_ns, end_ns) VALUES
  (100, 0, 1000, 1500), (70368744177864, 1, 2000, 2600), (70368744177865, 1, 3100, 3200),
  (70368744177866, 1, 4100, 4300);
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 500, 800, 0, 7, '_ZN2at6native13reduce_kernelILi512ELi1EEEvv', NULL, 1),
  (0, 1100, 1400, 0, 19, '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorage', 100, 2),
  (1, 2100, 2500, 1, 21, '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorage', NULL, 3);
INSERT INTO cuda_memsets (rank, start_ns, end_ns, device, stream, bytes, memory_kind, value, correlation_id)
  VALUES (0, 600, 650, 0, 16, 4096, 'device', 0, 4);
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id) VALUES (0, 700, 720, 0, 'pageable', 'device', 1024, 17, 'HtoD',
                         'host_staged', 5);
INSERT INTO cuda_synchronizations (rank, start_ns, end_ns, kind, context, stream, correlation_id) VALUES
  (1, 2550, 2650, 'stream_synchronize', 1, 21, 6);
)sql");
}

class GpuStreams : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-gpu-streams") / "gpu.sqlite";
    TestDatabase database(path_);
    fill_gpu_run(database);
  }
  std::filesystem::path path_;
};

TEST_F(GpuStreams, EachRankHasALanePerStreamWithWhatRanOnIt) {
  const analysis::Database database(path_);
  const auto streams = analysis::query_gpu_streams(database);
  ASSERT_EQ(streams.size(), 7u);
  // Rank 0: streams 7 (compute), 16 (memset), 17 (copy), 19 (NCCL, its handle matched through the
  // tied kernel).
  EXPECT_EQ(streams[0].stream, 7);
  EXPECT_EQ(streams[0].compute_kernels, 1u);
  EXPECT_EQ(streams[1].stream, 16);
  EXPECT_EQ(streams[1].memsets, 1u);
  EXPECT_EQ(streams[2].stream, 17);
  EXPECT_EQ(streams[2].copies, 1u);
  EXPECT_EQ(streams[3].stream, 19);
  EXPECT_EQ(streams[3].communication_kernels, 1u);
  EXPECT_EQ(streams[3].nccl_stream, 0xA0);
  EXPECT_EQ(streams[3].nccl_spans, 1u);
  // Rank 1: stream 21, matched through the kernel inside the span; then the span of the call
  // without a stream and the default stream's span, each a lane of its own on the rank's only GPU.
  // The synchronisation is the host's wait: it makes no lane.
  EXPECT_EQ(streams[4].rank, 1);
  EXPECT_EQ(streams[4].stream, 21);
  EXPECT_EQ(streams[4].nccl_stream, 0xB0);
  EXPECT_EQ(streams[5].stream, std::nullopt);
  EXPECT_TRUE(streams[5].spans_without_stream);
  EXPECT_EQ(streams[5].nccl_spans, 1u);
  EXPECT_EQ(streams[6].stream, std::nullopt);
  EXPECT_EQ(streams[6].nccl_stream, 0);
  EXPECT_EQ(streams[6].device, 1);
  EXPECT_EQ(analysis::stream_lane(streams, 0, 0, 19), 3);
  EXPECT_EQ(analysis::stream_lane(streams, 0, 0, 99), -1);
  EXPECT_EQ(analysis::span_lane(streams, 1, 0xB0), 4);
  EXPECT_EQ(analysis::span_lane(streams, 1, std::nullopt), 5);
  EXPECT_EQ(analysis::span_lane(streams, 1, 0), 6);
}

TEST_F(GpuStreams, WindowQueriesReturnTheStoredRowsOverlappingTheWindow) {
  const analysis::Database database(path_);
  const auto spans = analysis::query_timeline_device_spans(database, 1, 2500, 3150);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].call_id, kRank1 + 200);
  EXPECT_EQ(spans[0].function_id, 5);
  EXPECT_EQ(spans[0].nccl_stream, 0xB0);
  EXPECT_EQ(spans[1].nccl_stream, 0);
  EXPECT_TRUE(analysis::query_timeline_device_spans(database, 1, 2600, 3100).empty()); // open edges
  const auto memsets = analysis::query_timeline_memsets(database, 0, 0, 10000);
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0].bytes, 4096);
  EXPECT_EQ(memsets[0].stream, 16);
  const auto waits = analysis::query_timeline_synchronizations(database, 1, 2600, 2700);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].kind, "stream_synchronize");
  EXPECT_EQ(waits[0].stream, 21);
}

TEST(KernelNames, ShortNamesKeepTheFunctionsOwnName) {
  using analysis::short_kernel_name;
  EXPECT_EQ(
      short_kernel_name("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"),
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(short_kernel_name("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_"
                              "addIfEESt5arrayIPcLm3EEEEviT0_T1_"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(
      short_kernel_name("_ZN2at6native43_GLOBAL__N__50f1b6c4_10_Dropout_cu_0e96ed3824fused_dropout_kernel_"
                        "vecIffjLi1ELi4EbEEvNS_4cuda6detail10TensorInfoIKT_T1_EENS5_IS6_S8_EENS5_IT4_S8_EES8_"
                        "T0_NS_15PhiloxCudaStateE"),
      "fused_dropout_kernel_vec");
  // A generic name keeps its first template argument.
  EXPECT_EQ(
      short_kernel_name("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE"),
      "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>");
  // Names that are no C++ symbols stay as they are.
  EXPECT_EQ(short_kernel_name("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32"),
            "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32");
  EXPECT_EQ(analysis::demangled_kernel_name("_Z3fooi"), "foo(int)");
}

TEST(KernelNames, SymbolsTheDemanglerGivesUpOnStillGiveTheirName) {
  // cuDNN's kernels can nest deeper than the demangler goes (one in a DDP ResNet-50 trace did): the
  // name is read from the mangled nested name itself.
  std::string deep = "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolution";
  for (int level = 0; level < 400; ++level)
    deep += "IN4conv5InnerI";
  deep += "EEEvNT_6ParamsE";
  EXPECT_EQ(analysis::short_kernel_name(deep), "Kernel<ImplicitGemmConvolution>");
}

TEST(KernelNames, NcclKernelsAndKernelsLaunchedInACallAreCommunication) {
  using analysis::KernelKind;
  EXPECT_EQ(analysis::kernel_kind("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL", false),
            KernelKind::Communication);
  EXPECT_EQ(analysis::kernel_kind("ncclKernel_AllGather_RING_LL_Sum_int8_t", false),
            KernelKind::Communication);
  EXPECT_EQ(analysis::kernel_kind("allreduce_ipc_kernel", true), KernelKind::Communication);
  EXPECT_EQ(analysis::kernel_kind("gemm", false), KernelKind::Compute);
}

} // namespace
} // namespace commlens::test
