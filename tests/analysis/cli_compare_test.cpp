// `commlens compare`: two databases side by side, and two implementations inside one.
#include "cli_runner.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace commlens::test {
namespace {

nlohmann::json bin_of(const nlohmann::json& comparison, const std::string& function, const std::string& key) {
  for (const auto& bin : comparison["bins"])
    if (bin["function"] == function && bin["key"] == key)
      return bin;
  ADD_FAILURE() << "no bin " << function << " " << key << " in " << comparison.dump();
  return {};
}

TEST(CliCompare, TraceDatabasesShowTheKnownRatioOfMediansAndP95) {
  const auto directory = make_temp_directory("commlens-compare");
  const auto a = (directory / "a.sqlite").string(), b = (directory / "b.sqlite").string();
  {
    TestDatabase fast(a);
    fill_trace_run(fast, 1);
    TestDatabase slow(b);
    fill_trace_run(slow, 3);
  }
  const auto result = run_cli({"compare", a, b, "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto comparison = nlohmann::json::parse(result.out);
  EXPECT_TRUE(comparison["per_call_times"].get<bool>());
  const auto send = bin_of(comparison, "MPI_Send", "2^10");
  EXPECT_EQ(send["a"]["calls"], 4);
  EXPECT_EQ(send["b"]["calls"], 4);
  EXPECT_EQ(send["a"]["median_ns"], 100);
  EXPECT_EQ(send["b"]["median_ns"], 300);
  EXPECT_DOUBLE_EQ(send["median_ratio"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(send["p95_ratio"].get<double>(), 3.0);

  const auto text = run_cli({"compare", a, b});
  EXPECT_NE(text.out.find("3.00x"), std::string::npos) << text.out;
}

TEST(CliCompare, SummaryDatabasesFallBackToMeansAndSaySo) {
  const auto directory = make_temp_directory("commlens-compare-summary");
  const auto a = (directory / "a.sqlite").string(), b = (directory / "b.sqlite").string();
  {
    TestDatabase first(a);
    fill_three_rank_run(first);
    TestDatabase second(b);
    fill_three_rank_run(second);
    second.execute("UPDATE call_stats SET time_total_ns = time_total_ns * 2 WHERE function_id = 3");
  }
  const auto result = run_cli({"compare", a, b, "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto comparison = nlohmann::json::parse(result.out);
  EXPECT_FALSE(comparison["per_call_times"].get<bool>());
  EXPECT_NE(comparison["note"].get<std::string>().find("mean time per call"), std::string::npos);
  const auto allreduce = bin_of(comparison, "MPI_Allreduce", "2^3");
  EXPECT_EQ(allreduce["a"]["median_ns"], 200'000'000); // 6 s over 30 calls
  EXPECT_DOUBLE_EQ(allreduce["median_ratio"].get<double>(), 2.0);
  EXPECT_TRUE(allreduce["p95_ratio"].is_null());
}

TEST(CliCompare, ImplementationsInsideOneDatabase) {
  const auto path = (make_temp_directory("commlens-compare-impl") / "commlens.sqlite").string();
  {
    TestDatabase database(path);
    fill_trace_run(database);
    add_runtime_implementation_calls(database);
  }
  const auto result = run_cli({"compare", path, "--implementations", "mpi,runtime:ring", "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto comparison = nlohmann::json::parse(result.out);
  const auto allreduce = bin_of(comparison, "MPI_Allreduce", "2^6");
  EXPECT_EQ(allreduce["a"]["calls"], 5); // four 1000 ns calls plus fill_trace_run's one of 3000 ns
  EXPECT_EQ(allreduce["b"]["calls"], 4);
  EXPECT_EQ(allreduce["a"]["median_ns"], 1000);
  EXPECT_EQ(allreduce["b"]["median_ns"], 500);
  EXPECT_DOUBLE_EQ(allreduce["median_ratio"].get<double>(), 0.5);
  EXPECT_EQ(bin_of(comparison, "MPI_Send", "2^10")["b"]["calls"], 0);

  const auto unknown = run_cli({"compare", path, "--implementations", "mpi,runtime:tree"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no traced calls ran by implementation 'runtime:tree'"), std::string::npos);
}

} // namespace
} // namespace commlens::test
