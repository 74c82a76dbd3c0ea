// `commlens run`: environment handed to the command, exit status forwarded, profile reported.
// The preloaded library is a do-nothing stand-in (COMMLENS_LIBRARY), so no MPI is needed here; the
// MPI end-to-end runs live with the PMPI collector's tests.
#include "cli_runner.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

namespace commlens::test {
namespace {

namespace fs = std::filesystem;

class CliRun : public ::testing::Test {
protected:
  void SetUp() override { output_ = make_temp_directory("commlens-cli-run") / "out"; }

  CliResult run(std::vector<std::string> arguments, const std::string& extra_environment = "") {
    arguments.insert(arguments.begin(), {"run", "--output", output_.string()});
    return run_cli(arguments,
                   "COMMLENS_LIBRARY=" + shell_quote(COMMLENS_TEST_PRELOAD_PATH) + " " + extra_environment);
  }

  fs::path output_;
};

TEST_F(CliRun, CommandSeesThePreloadAndTheProfilerSettings) {
  const auto result = run({"--mode", "trace", "--collectors", "pmpi,nvtx", "--flush-ms", "200", "--quiet",
                           "--", "/bin/sh", "-c", "env > \"$COMMLENS_OUTPUT/env.txt\""},
                          "LD_PRELOAD=/usr/lib/existing.so");
  ASSERT_EQ(result.status, 0) << result.err;
  const auto environment = read_file((output_ / "env.txt").string());
  EXPECT_NE(
      environment.find("LD_PRELOAD=" + std::string(COMMLENS_TEST_PRELOAD_PATH) + ":/usr/lib/existing.so\n"),
      std::string::npos)
      << environment;
  EXPECT_NE(environment.find("COMMLENS_OUTPUT=" + output_.string() + "\n"), std::string::npos);
  EXPECT_NE(environment.find("COMMLENS_MODE=trace\n"), std::string::npos);
  EXPECT_NE(environment.find("COMMLENS_COLLECTORS=pmpi,nvtx\n"), std::string::npos);
  EXPECT_NE(environment.find("COMMLENS_FLUSH_MS=200\n"), std::string::npos);
  EXPECT_NE(environment.find("COMMLENS_QUIET=1\n"), std::string::npos);
}

TEST_F(CliRun, CommandExitStatusIsForwarded) {
  EXPECT_EQ(run({"--", "/bin/sh", "-c", "exit 7"}).status, 7);
}

TEST_F(CliRun, CommandKilledBySignalGives128PlusTheSignal) {
  EXPECT_EQ(run({"--", "/bin/sh", "-c", "kill -TERM $$"}).status, 128 + 15);
}

TEST_F(CliRun, CommandThatCannotBeStartedGives127) {
  const auto result = run({"--", "/nonexistent/program"});
  EXPECT_EQ(result.status, 127);
  EXPECT_NE(result.err.find("cannot run '/nonexistent/program'"), std::string::npos) << result.err;
}

TEST_F(CliRun, CommandWithoutMpiLeavesNoProfileAndSaysSo) {
  const auto result = run({"--", "/bin/true"});
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.err.find("no profile was written to " + output_.string()), std::string::npos)
      << result.err;
}

TEST_F(CliRun, DatabaseWrittenByTheRunIsNamedAndSummarized) {
  const auto fixture = make_temp_directory("commlens-cli-run-fixture") / "commlens.sqlite";
  {
    TestDatabase database(fixture);
    fill_three_rank_run(database);
  }
  const auto result = run({"--", "/bin/cp", fixture.string(), (output_ / "commlens.sqlite").string()});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("commlens: database: " + (output_ / "commlens.sqlite").string() + "\n"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("imbalance 71.4%"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("MPI_Allreduce"), std::string::npos);
  EXPECT_EQ(result.err.find("[1KiB, 2KiB)"), std::string::npos) << "the brief summary has no histograms";
}

TEST_F(CliRun, DatabaseLeftByAnEarlierRunIsNotReportedAsThisRuns) {
  fs::create_directories(output_);
  {
    TestDatabase database(output_ / "commlens.sqlite");
    fill_three_rank_run(database);
  }
  const auto result = run({"--", "/bin/true"});
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.err.find("no profile was written"), std::string::npos) << result.err;
}

TEST_F(CliRun, MissingPreloadLibraryIsBadInputNamingTheVariable) {
  const auto result = run_cli({"run", "--", "/bin/true"}, "COMMLENS_LIBRARY=/nonexistent/libcommlens.so");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err, "commlens: error: COMMLENS_LIBRARY=/nonexistent/libcommlens.so: no such file\n");
}

TEST_F(CliRun, UnknownModeOrCollectorIsAUsageError) {
  EXPECT_EQ(run({"--mode", "full", "--", "/bin/true"}).status, 2);
  const auto result = run({"--collectors", "pmpi,cuda", "--", "/bin/true"});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("unknown collector 'cuda'"), std::string::npos) << result.err;
}

TEST_F(CliRun, MissingCommandIsAUsageError) {
  EXPECT_EQ(run({}).status, 2);
}

} // namespace
} // namespace commlens::test
