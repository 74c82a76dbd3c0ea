// `commlens export`: Chrome/Perfetto JSON with one event per traced call and send->receive arrows;
// CSV with one file per table.
#include "cli_runner.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace commlens::test {
namespace {

class CliExport : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ = make_temp_directory("commlens-export");
    path_ = (directory_ / "commlens.sqlite").string();
    TestDatabase database(path_);
    fill_trace_run(database);
  }
  std::filesystem::path directory_;
  std::string path_;
};

TEST_F(CliExport, ChromeTraceParsesWithOneCompleteEventPerTracedCall) {
  const auto output = (directory_ / "trace.json").string();
  const auto result = run_cli({"export", path_, "--format", "chrome", "-o", output});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto trace = nlohmann::json::parse(read_file(output));
  int complete = 0, flow_starts = 0, flow_ends = 0, process_names = 0;
  for (const auto& event : trace["traceEvents"]) {
    const auto phase = event["ph"].get<std::string>();
    complete += phase == "X";
    flow_starts += phase == "s";
    flow_ends += phase == "f";
    process_names += event["name"] == "process_name";
  }
  EXPECT_EQ(complete, 13); // every mpi_calls row
  EXPECT_EQ(process_names, 2);
  // The four MPI_Send (tag 7) match the four MPI_Recv; the MPI_Isend (tag 9) have no receive.
  EXPECT_EQ(flow_starts, 4);
  EXPECT_EQ(flow_ends, 4);
  EXPECT_NE(result.err.find("exported 13 calls and 4 send->receive arrows"), std::string::npos) << result.err;
}

TEST_F(CliExport, ChromeEventsCarryTheirCallsArgumentsInMicroseconds) {
  const auto result = run_cli({"export", path_, "--format", "chrome"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto trace = nlohmann::json::parse(result.out);
  for (const auto& event : trace["traceEvents"])
    if (event["ph"] == "X" && event["name"] == "MPI_Allreduce") {
      EXPECT_EQ(event["pid"], 0);
      EXPECT_EQ(event["tid"], 1);
      EXPECT_DOUBLE_EQ(event["ts"].get<double>(), 0.5);
      EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 3.0);
      EXPECT_EQ(event["args"]["bytes_sent"], 64);
      return;
    }
  FAIL() << "no MPI_Allreduce event";
}

TEST_F(CliExport, ChromeExportOfASummaryDatabaseIsBadInput) {
  const auto summary = (directory_ / "summary.sqlite").string();
  {
    TestDatabase database(summary);
    fill_three_rank_run(database);
  }
  const auto result = run_cli({"export", summary, "--format", "chrome"});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find(summary + ": no traced calls"), std::string::npos) << result.err;
}

TEST_F(CliExport, CsvWritesEveryTableWithAHeader) {
  const auto output = directory_ / "csv";
  const auto result = run_cli({"export", path_, "--format", "csv", "-o", output.string()});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto calls = read_file((output / "mpi_calls.csv").string());
  EXPECT_EQ(calls.rfind("id,rank,thread,function_id,start_ns,end_ns,", 0), 0u) << calls;
  EXPECT_EQ(std::count(calls.begin(), calls.end(), '\n'), 14); // header + 13 calls
  EXPECT_NE(read_file((output / "functions.csv").string()).find("1,MPI_Send,p2p,0\n"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(output / "call_stats.csv"));
}

} // namespace
} // namespace commlens::test
