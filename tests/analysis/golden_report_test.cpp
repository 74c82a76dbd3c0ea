// Golden reports: examples/ring_pingpong under `mpirun -np 4` with the collector, then
// `commlens report --format json` and `commlens export --format chrome`, compared with the counts
// its documented pattern implies (examples/ring_pingpong.c, 20 iterations).
#include "harness/cli.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;

const nlohmann::json& function_named(const nlohmann::json& report, const std::string& name) {
  for (const auto& function : report["functions"])
    if (function["name"] == name)
      return function;
  throw std::runtime_error("no " + name + " in the report");
}

std::uint64_t histogram_calls(const nlohmann::json& function, const std::string& key) {
  for (const auto& bin : function["size_histogram"])
    if (bin["key"] == key)
      return bin["calls"];
  return 0;
}

class GoldenRingPingpong : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    job_ = new JobResult(run_profiled_job(
        {.command = {example_program("ring_pingpong"), std::to_string(kIterations)}, .mode = "trace"}));
  }
  static void TearDownTestSuite() { delete job_; }
  static JobResult* job_;
};
JobResult* GoldenRingPingpong::job_ = nullptr;

TEST_F(GoldenRingPingpong, JsonReportHoldsTheExactCallsHistogramsAndPartners) {
  ASSERT_EQ(job_->exit_code, 0) << job_->describe();
  const auto report =
      nlohmann::json::parse(commlens_output("report " + job_->merged_database().string() + " --format json"));
  const int n = kIterations;
  // Per iteration: ring 1 KiB, across 8000 B, gather 40 B (ranks 1-3), MPI_PROC_NULL 0 B.
  const auto& send = function_named(report, "MPI_Send");
  EXPECT_EQ(send["calls"], (4 * 3 + 3) * n);
  EXPECT_EQ(histogram_calls(send, "2^10"), 4u * n);
  EXPECT_EQ(histogram_calls(send, "2^12"), 4u * n);
  EXPECT_EQ(histogram_calls(send, "2^5"), 3u * n);
  EXPECT_EQ(histogram_calls(send, "0"), 4u * n);
  EXPECT_EQ(function_named(report, "MPI_Recv")["calls"], (4 * 2 + 3) * n);
  EXPECT_EQ(function_named(report, "MPI_Sendrecv")["calls"], 4 * n);
  EXPECT_EQ(function_named(report, "MPI_Sendrecv")["bytes_sent"], 4 * n * 400);
  // Rank 3 sends the ring (1 KiB) and the gather (40 B) to rank 0.
  bool found = false;
  for (const auto& partner : report["partners"])
    if (partner["from"] == 3 && partner["to"] == 0) {
      found = true;
      EXPECT_EQ(partner["messages"], 2 * n);
      EXPECT_EQ(partner["bytes"], n * (1024 + 40));
    }
  EXPECT_TRUE(found) << report["partners"].dump();
  EXPECT_EQ(report["communicators"][0]["label"], "MPI_COMM_WORLD");
}

TEST_F(GoldenRingPingpong, ChromeExportHoldsOneEventPerTracedCall) {
  ASSERT_EQ(job_->exit_code, 0) << job_->describe();
  const auto trace = nlohmann::json::parse(
      commlens_output("export " + job_->merged_database().string() + " --format chrome 2>/dev/null"));
  const auto report =
      nlohmann::json::parse(commlens_output("report " + job_->merged_database().string() + " --format json"));
  std::uint64_t traced_calls = 0, events = 0, flows = 0;
  for (const auto& function : report["functions"])
    traced_calls += function["calls"].get<std::uint64_t>();
  for (const auto& event : trace["traceEvents"]) {
    events += event["ph"] == "X";
    flows += event["ph"] == "s";
  }
  EXPECT_EQ(events, traced_calls);
  // Ring, across and the pair exchange match one to one; gather receives from MPI_ANY_SOURCE are
  // matched when the collector resolved their source.
  EXPECT_GE(flows, 4u * kIterations * 3);
}

} // namespace
} // namespace commlens::integration
