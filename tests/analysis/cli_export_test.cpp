// `commlens export`: Chrome/Perfetto JSON with one event per traced call and send->receive arrows;
// CSV with one file per table.
#include "cli_runner.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

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
  EXPECT_NE(result.err.find("exported 13 calls, 4 send->receive arrows"), std::string::npos) << result.err;
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

// An NCCL call carries its nccl_calls row (datatype, op, stream, NCCL root and peer, group
// nesting) under category nccl; MPI calls keep category mpi and no such arguments.
TEST_F(CliExport, ChromeEventsOfNcclCallsCarryTheirNcclArguments) {
  // Call 5000 of rank 1's first thread: 1 << 46 | 5000.
  TestDatabase(path_).execute(R"sql(
INSERT INTO functions (id, name, family) VALUES (20, 'nccl:Send', 'nccl_p2p');
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag, comm_id)
VALUES (70368744182664, 1, 0, 20, 40000, 41000, 80, 0, -1, 1, 4611686018427387905);
INSERT INTO nccl_calls VALUES (70368744182664, 1, 8, NULL, 4096, NULL, 3, 1);
)sql");
  const auto result = run_cli({"export", path_, "--format", "chrome"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto trace = nlohmann::json::parse(result.out);
  int nccl_events = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X" || !event.contains("cat") || event["cat"] == "mpi") {
      EXPECT_FALSE(event.contains("args") && event["args"].contains("nccl_peer")) << event.dump();
      continue;
    }
    ++nccl_events;
    EXPECT_EQ(event["cat"], "nccl");
    EXPECT_EQ(event["name"], "nccl:Send");
    EXPECT_EQ(event["args"]["datatype"], "ncclFloat64");
    EXPECT_FALSE(event["args"].contains("op"));
    EXPECT_EQ(event["args"]["stream"], "0x1000");
    EXPECT_EQ(event["args"]["nccl_peer"], 3);
    EXPECT_EQ(event["args"]["nccl_root"], -1);
    EXPECT_EQ(event["args"]["group_depth"], 1);
  }
  EXPECT_EQ(nccl_events, 1);
}

// Three copies (two on rank 0's GPU 0, one on rank 1's GPU 1), a kernel, two user NVTX ranges
// and one of commlens' own MPI-domain ranges, which repeats an MPI call and is not exported.
constexpr std::string_view kGpuRows = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, bytes,
                         stream, copy_kind, path, link, mpi_call_id, correlation_id) VALUES
  (0, 1000, 1080, 0, 0, 0, 'device', 'pinned', 1024, 7, 'DtoH', 'host_staged', NULL, 1, 11),
  (0, 2000, 2010, 0, 0, 1, 'device', 'device', 4096, 7, 'PtoP', 'peer', 'nvlink', NULL, 12),
  (1, 1100, 1180, 1, 1, 1, 'pinned', 'device', 1024, 3, 'HtoD', 'host_staged', NULL, 2, 13);
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 3000, 3500, 0, 7, 'reduce_kernel', NULL, 14);
INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES
  (0, 0, 5000, NULL, 'train'), (1, 0, 5000, 'app', 'train'), (0, 1000, 1100, 'MPI', 'MPI_Send');
)sql";

TEST_F(CliExport, ChromeTraceHoldsOneEventPerCopyKernelAndUserRangeOnTheirOwnTracks) {
  {
    TestDatabase database(path_);
    database.execute(kGpuRows);
  }
  const auto result = run_cli({"export", path_, "--format", "chrome"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto trace = nlohmann::json::parse(result.out);
  std::map<std::string, int> complete_by_category;
  std::map<std::pair<int, int>, std::string> track_names;
  const nlohmann::json* staged_copy = nullptr;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X")
      ++complete_by_category[event["cat"].get<std::string>()];
    if (event["ph"] == "M" && event["name"] == "thread_name")
      track_names[{event["pid"].get<int>(), event["tid"].get<int>()}] =
          event["args"]["name"].get<std::string>();
    if (event["ph"] == "X" && event["cat"] == "cuda_copy" && event["pid"] == 0 &&
        event["args"]["stream"] == 7 && event["args"]["path"] == "host_staged")
      staged_copy = &event;
  }
  EXPECT_EQ(complete_by_category,
            (std::map<std::string, int>{{"mpi", 13}, {"cuda_copy", 3}, {"cuda_kernel", 1}, {"nvtx", 2}}));
  ASSERT_NE(staged_copy, nullptr);
  const auto& copy = *staged_copy;
  EXPECT_DOUBLE_EQ(copy["ts"].get<double>(), 1.0); // the MPI_Send it was issued in starts at 1 us too
  EXPECT_DOUBLE_EQ(copy["dur"].get<double>(), 0.08);
  EXPECT_EQ(copy["args"]["bytes"], 1024);
  EXPECT_EQ(copy["args"]["mpi_call_id"], "1");
  EXPECT_EQ(track_names.at({0, copy["tid"].get<int>()}), "GPU 0 copies");
  EXPECT_EQ(track_names.size(),
            5u); // NVTX on both ranks, rank 0 GPU 0 copies and kernels, rank 1 GPU 1 copies
  EXPECT_NE(result.err.find("3 CUDA copies, 1 kernels and 2 NVTX ranges"), std::string::npos) << result.err;
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
