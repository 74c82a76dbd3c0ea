// The NCCL example (examples/cuda/nccl_allreduce) on one GPU, one rank, with ncclAvg: NCCL's
// one-rank path launches one scaling kernel per call, so every call's kernel, its fields and the
// report's enqueue and kernel time can be checked on a machine with a single GPU.
#include "gpu_program.hpp"

namespace commlens::integration {
namespace {

constexpr std::int64_t kElements = 1 << 20;

TEST(NcclExample, OneRankStoresEveryAllReduceWithItsFieldsAndItsKernel) {
  if (!COMMLENS_HAVE_NCCL_EXAMPLE) {
    GTEST_SKIP() << "nccl.h or libnccl not found at build time: skipped nccl_allreduce";
  }
  if (cuda_tests::gpu_count() < 1) {
    GTEST_SKIP() << "no CUDA device: skipped nccl_allreduce on one GPU";
  }
  const JobResult result =
      run_profiled_job({.command = {cuda_example("nccl_allreduce"), std::to_string(kIterations),
                                    std::to_string(kElements), "avg"},
                        .mode = "trace",
                        .environment = {{"COMMLENS_COLLECTORS", "all"}, {"COMMLENS_KERNELS", "all"}},
                        .timeout_seconds = 240,
                        .ranks = 1});
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  EXPECT_NE(result.standard_output.find("allreduce ok"), std::string::npos) << result.describe();
  Database db(result.merged_database());
  ASSERT_EQ(db.scalar("SELECT count(*) FROM run WHERE key = 'cuda_collectors' AND value = 'on'"), 1)
      << result.describe();
  const std::string allreduces = "FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                                 "JOIN nccl_calls n ON n.call_id = m.id WHERE f.name = 'nccl:AllReduce'";
  EXPECT_EQ(db.scalar("SELECT count(*) " + allreduces), kIterations + 1);
  EXPECT_EQ(db.scalar("SELECT count(*) " + allreduces +
                      " AND m.bytes_sent = " + std::to_string(kElements * 4) +
                      " AND m.bytes_recv = m.bytes_sent AND n.datatype = 7 AND n.op = 4 AND n.stream <> 0 "
                      "AND n.group_depth = 0"),
            kIterations + 1)
      << "float32, ncclAvg, the program's own stream";
  EXPECT_EQ(db.scalar("SELECT count(*) FROM communicators c JOIN functions f ON f.id = c.created_by "
                      "WHERE f.name = 'nccl:CommInitRank' AND c.size = 1 AND c.local_rank = 0 AND c.id >= " +
                      std::to_string(std::int64_t{1} << 62)),
            1);
  // Every call launched its kernel inside the wrapper: CUPTI tied it to the call.
  EXPECT_EQ(db.scalar("SELECT count(DISTINCT m.id) " + allreduces +
                      " AND EXISTS (SELECT 1 FROM cuda_kernels k WHERE k.mpi_call_id = m.id)"),
            kIterations + 1);
  const auto kernel_ns = db.scalar("SELECT sum(k.end_ns - k.start_ns) FROM cuda_kernels k JOIN mpi_calls m "
                                   "ON m.id = k.mpi_call_id JOIN functions f ON f.id = m.function_id "
                                   "WHERE f.name = 'nccl:AllReduce'");
  const auto enqueue_ns = db.scalar("SELECT sum(m.end_ns - m.start_ns) " + allreduces);
  EXPECT_GT(kernel_ns, 0);
  std::cout << "nccl_allreduce one rank: " << kIterations + 1 << " calls, enqueue " << enqueue_ns
            << " ns, kernels " << kernel_ns << " ns\n";
}

} // namespace
} // namespace commlens::integration
