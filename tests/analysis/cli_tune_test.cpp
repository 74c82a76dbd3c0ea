// `commlens tune` where there is no GPU: one line saying so, status 2, no table written. The GPUs are
// hidden from the driver, so the test says the same on a machine that has some.
#include "cli_runner.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace commlens::test {
namespace {

TEST(CliTune, WithoutAGpuFailsWithOneLineAndStatus2) {
  const auto table = make_temp_directory("commlens-cli-tune") / "table.json";
  const auto result = run_cli({"tune", "--output", table.string()}, "CUDA_VISIBLE_DEVICES=-1");
  EXPECT_EQ(result.status, 2);
  EXPECT_TRUE(result.err.starts_with("commlens tune: no GPU to measure on: ")) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_FALSE(std::filesystem::exists(table));
}

TEST(CliTune, RejectsBadOptions) {
  EXPECT_EQ(run_cli({"tune", "--output", "x.json", "--ranks", "1"}).status, 2);
  EXPECT_EQ(run_cli({"tune", "--ops", "allreduce,barrier"}).status, 2);
  EXPECT_EQ(run_cli({"tune", "--factor", "1"}).status, 2);
  // Without --output the table's name comes from the GPU's, so there must be one first.
  EXPECT_EQ(run_cli({"tune", "--quick"}, "CUDA_VISIBLE_DEVICES=-1").status, 2);
}

} // namespace
} // namespace commlens::test
