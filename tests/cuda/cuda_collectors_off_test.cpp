// CPU-only behaviour of the CUDA collectors: libcommlens.so loads and profiles normally, and the
// run table says the GPU collectors are off and why.
#include "gpu_probe.hpp"
#include "harness/profiled_test.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

std::string run_value(const Database& db, const std::string& key) {
  const auto rows = db.query("SELECT value FROM run WHERE key = '" + key + "'");
  return rows.empty() || !rows[0][0].text ? std::string() : *rows[0][0].text;
}

std::unique_ptr<Database> profile_ring_pingpong(const std::map<std::string, std::string>& environment) {
  const JobResult result = run_profiled_job(
      {.command = {example_program("ring_pingpong"), "5"}, .mode = "trace", .environment = environment});
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  if (result.exit_code != 0) {
    return nullptr;
  }
  return std::make_unique<Database>(result.merged_database());
}

TEST(CudaCollectorsOff, WhenNotRequestedTheRunTableSaysSoAndMpiIsStillProfiled) {
  const auto db = profile_ring_pingpong({{"COMMLENS_COLLECTORS", "pmpi"}});
  ASSERT_TRUE(db);
  EXPECT_EQ(run_value(*db, "cuda_collectors"), "off");
  EXPECT_NE(run_value(*db, "cuda_collectors_reason").find("not requested"), std::string::npos);
  EXPECT_GT(db->scalar("SELECT count(*) FROM mpi_calls"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies"), 0);
}

TEST(CudaCollectorsOff, WithoutAGpuTheRunTableSaysWhyAndMpiIsStillProfiled) {
  if (cuda_tests::gpu_count() > 0) {
    GTEST_SKIP() << "a GPU is present: skipped the no-GPU run (tests/cuda GPU tests cover this machine)";
  }
  const auto db = profile_ring_pingpong({});
  ASSERT_TRUE(db);
  EXPECT_EQ(run_value(*db, "cuda_collectors"), "off");
  const std::string reason = run_value(*db, "cuda_collectors_reason");
  EXPECT_FALSE(reason.empty());
  std::cout << "cuda_collectors_reason: " << reason << "\n";
  EXPECT_GT(db->scalar("SELECT count(*) FROM mpi_calls"), 0);
}

} // namespace
} // namespace commlens::integration
