// `commlens histogram --save` and `commlens check`: 0 on a match, 1 on each kind of regression,
// 2 on bad input, a Markdown summary and optional JUnit XML.
#include "cli_runner.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace commlens::test {
namespace {

class CliCheck : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ = make_temp_directory("commlens-check");
    baseline_database_ = (directory_ / "baseline.sqlite").string();
    baseline_ = (directory_ / "baseline.json").string();
    TestDatabase database(baseline_database_);
    fill_three_rank_run(database);
    database.close();
    const auto saved = run_cli({"histogram", baseline_database_, "--save", baseline_});
    ASSERT_EQ(saved.status, 0) << saved.err;
  }
  // The three-rank run plus `change` applied to it.
  CliResult check(const std::string& change, std::vector<std::string> options = {}) {
    const auto path = (directory_ / ("run-" + std::to_string(runs_++) + ".sqlite")).string();
    TestDatabase database(path);
    fill_three_rank_run(database);
    if (!change.empty())
      database.execute(change);
    database.close();
    std::vector<std::string> arguments{"check", "--baseline", baseline_, path};
    arguments.insert(arguments.end(), options.begin(), options.end());
    return run_cli(arguments);
  }
  std::filesystem::path directory_;
  std::string baseline_database_;
  std::string baseline_;
  int runs_ = 0;
};

TEST_F(CliCheck, IdenticalRunMatches) {
  const auto result = check("");
  EXPECT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("## commlens check: OK"), std::string::npos);
}

TEST_F(CliCheck, NewSizeBinIsARegression) {
  const auto result = check("INSERT INTO call_stats VALUES (0, 1, 0, 20, 1, 0, 1, 1048576, 0, 5, 5, 5)");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.out.find("| MPI_Send | new size bin [1MiB, 2MiB) (1 calls) |"), std::string::npos)
      << result.out;
}

// NCCL calls are in call_stats under their own names: a baseline holds them, and a change in
// their sizes is a regression like an MPI function's.
TEST_F(CliCheck, NcclFunctionsAreCheckedByName) {
  const std::string nccl_run =
      "INSERT INTO functions VALUES (30, 'nccl:AllReduce', 'nccl_collective', 1);"
      "INSERT INTO call_stats VALUES (0, 30, 4611686018427387905, 12, -1, 0, 6, 24576, "
      "24576, 60, 10, 10)";
  {
    const auto path = (directory_ / "nccl-baseline.sqlite").string();
    TestDatabase database(path);
    fill_three_rank_run(database);
    database.execute(nccl_run);
    database.close();
    ASSERT_EQ(run_cli({"histogram", path, "--save", baseline_}).status, 0);
  }
  EXPECT_EQ(check(nccl_run).status, 0);
  const auto moved = check(nccl_run + ";UPDATE call_stats SET size_bin = 20 WHERE function_id = 30");
  EXPECT_EQ(moved.status, 1);
  EXPECT_NE(moved.out.find("| nccl:AllReduce | new size bin [1MiB, 2MiB) (6 calls) |"), std::string::npos)
      << moved.out;
}

TEST_F(CliCheck, NewFunctionIsARegression) {
  const auto result = check("INSERT INTO functions VALUES (9, 'MPI_Alltoall', 'collective', 0);"
                            "INSERT INTO call_stats VALUES (0, 9, 0, 3, -1, 0, 1, 8, 8, 5, 5, 5)");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.out.find("| MPI_Alltoall | new function |"), std::string::npos) << result.out;
}

TEST_F(CliCheck, ChangedCountIsARegressionUnlessWithinTolerance) {
  // MPI_Send in 2^10: 4 calls become 5 (25%), with the same bytes.
  const std::string change =
      "UPDATE call_stats SET count = 5 WHERE rank = 0 AND function_id = 1 AND size_bin = 10";
  const auto strict = check(change);
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.out.find("calls in [1KiB, 2KiB) changed 4 -> 5"), std::string::npos) << strict.out;
  EXPECT_EQ(check(change, {"--tolerance", "count=20%"}).status, 1);
  EXPECT_EQ(check(change, {"--tolerance", "count=25%"}).status, 0);
}

TEST_F(CliCheck, ChangedBytesIsARegressionUnlessWithinTolerance) {
  const std::string change =
      "UPDATE call_stats SET bytes_sent = 4200 WHERE rank = 0 AND function_id = 1 AND size_bin = 10";
  const auto strict = check(change);
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.out.find("bytes in [1KiB, 2KiB) changed 4096 -> 4200"), std::string::npos) << strict.out;
  EXPECT_EQ(check(change, {"--tolerance", "bytes=0.05"}).status, 0);
}

TEST_F(CliCheck, VanishedBinIsARegression) {
  const auto result = check("DELETE FROM call_stats WHERE function_id = 1 AND size_bin = 12");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.out.find("size bin [4KiB, 8KiB) gone (had 2 calls)"), std::string::npos) << result.out;
}

TEST_F(CliCheck, JunitXmlNamesTheFailingFunction) {
  const auto junit = (directory_ / "check.xml").string();
  const auto result = check("UPDATE call_stats SET count = 7 WHERE function_id = 4", {"--junit", junit});
  EXPECT_EQ(result.status, 1);
  const auto xml = read_file(junit);
  // Four functions and the run's one finding (rank 2 works a second less in phase 0).
  EXPECT_NE(xml.find("tests=\"5\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"findings\" name=\"load-imbalance@phase-0\"></testcase>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"MPI_Barrier\"><failure message=\"calls in 0B changed 3 -&gt; 7; \"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"MPI_Send\"></testcase>"), std::string::npos);
}

// The three-rank run has one finding: in phase 0 rank 2 spends 1 s of its 4 s in MPI_Barrier while
// the others work, so they lose 1 s of the phase's 12 (2.5% of the ranks' 40 s).
TEST_F(CliCheck, ANewFindingIsARegression) {
  // 3,000 MPI_Send calls of 8 bytes per rank taking 2 s: a small-message storm.
  const auto result =
      check("INSERT INTO call_stats VALUES (0, 1, 0, 3, 1, 0, 9000, 72000, 0, 2000000000, 1, 1)");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(
      result.out.find("| small-messages@MPI_Send | new finding: Small-message storm in MPI_Send: 9000 calls "
                      "of less than 1 KiB take 2.000 s (5.0% of the ranks' time) |"),
      std::string::npos)
      << result.out;
}

TEST_F(CliCheck, AFindingThatGrewBeyondTheToleranceIsARegression) {
  // Rank 2's barrier takes 2 s: the others lose 2 s, 5.0% of the ranks' time instead of 2.5%.
  const std::string change =
      "UPDATE call_stats SET time_total_ns = 2000000000 WHERE rank = 2 AND function_id = 4";
  const auto grown = check(change);
  EXPECT_EQ(grown.status, 1);
  EXPECT_NE(grown.out.find("| load-imbalance@phase-0 | finding grew from 2.5% to 5.0% of the ranks' time: "),
            std::string::npos)
      << grown.out;
  EXPECT_EQ(check(change, {"--tolerance", "finding=100%"}).status, 0);
  EXPECT_EQ(check(change, {"--tolerance", "finding=99%"}).status, 1);
}

TEST_F(CliCheck, AFindingThatWentAwayPassesAndIsListedAsResolved) {
  const auto result = check("UPDATE call_stats SET time_total_ns = 0 WHERE rank = 2 AND function_id = 4");
  EXPECT_EQ(result.status, 0) << result.out;
  EXPECT_NE(result.out.find("Resolved since the baseline: `load-imbalance@phase-0`."), std::string::npos)
      << result.out;
}

TEST_F(CliCheck, ABaselineSavedBeforeFindingsChecksTheHistogramsAndSaysSo) {
  const auto old_baseline = (directory_ / "v1.json").string();
  {
    std::ofstream(old_baseline) << R"({"format": "commlens-histograms", "version": 1, "functions": {
      "MPI_Send": {"2^10": {"calls": 4, "bytes": 4096}, "2^12": {"calls": 2, "bytes": 10000}},
      "MPI_Recv": {"2^10": {"calls": 4, "bytes": 4096}}, "MPI_Allreduce": {"2^3": {"calls": 30, "bytes": 480}},
      "MPI_Barrier": {"0": {"calls": 3, "bytes": 0}}}})";
  }
  const auto result = run_cli({"check", "--baseline", old_baseline, baseline_database_});
  EXPECT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("The baseline holds no findings"), std::string::npos) << result.out;
}

TEST_F(CliCheck, BadBaselineOrToleranceIsBadInput) {
  const auto not_json = (directory_ / "not.json").string();
  { std::ofstream(not_json) << "{\"format\": \"other\"}"; }
  const auto foreign = run_cli({"check", "--baseline", not_json, baseline_database_});
  EXPECT_EQ(foreign.status, 2);
  EXPECT_NE(foreign.err.find(not_json + ": not a commlens histogram baseline"), std::string::npos)
      << foreign.err;
  EXPECT_EQ(run_cli({"check", "--baseline", baseline_ + ".missing", baseline_database_}).status, 2);
  EXPECT_EQ(check("", {"--tolerance", "time=5%"}).status, 2);
  EXPECT_EQ(check("", {"--tolerance", "count=lots"}).status, 2);
}

} // namespace
} // namespace commlens::test
