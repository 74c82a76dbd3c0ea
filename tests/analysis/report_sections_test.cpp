// The report sections beyond the per-function summary, on a trace database with known numbers.
#include "cli_runner.hpp"
#include "commlens/analysis/quantile_sketch.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/report_format.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace commlens::test {
namespace {

using analysis::build_report;
using analysis::Database;

// A section's rows as the report writes them: each number in its column's unit.
std::vector<std::vector<std::string>> display(const analysis::OptionalSection& section) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : section.rows) {
    auto& cells = rows.emplace_back();
    for (std::size_t column = 0; column < row.size(); ++column)
      cells.push_back(analysis::format_cell(row[column], section.columns[column].unit));
  }
  return rows;
}

class ReportSections : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-sections") / "commlens.sqlite";
    TestDatabase database(path_);
    fill_trace_run(database);
  }
  analysis::Report report() const { return build_report(Database(path_)); }
  std::filesystem::path path_;
};

TEST_F(ReportSections, PartnerMatrixCountsEachSendOnce) {
  const auto partners = report().partners;
  ASSERT_EQ(partners.size(), 1u);
  EXPECT_EQ(partners[0].from, 0);
  EXPECT_EQ(partners[0].to, 1);
  EXPECT_EQ(partners[0].messages, 8u); // 4 MPI_Send + 4 MPI_Isend
  EXPECT_EQ(partners[0].bytes, 4096u + 32u);
}

TEST_F(ReportSections, QueueTimesGiveMedianP95AndMaxPerFunction) {
  const auto queue_times = report().queue_times;
  ASSERT_EQ(queue_times.size(), 1u);
  EXPECT_EQ(queue_times[0].function, "MPI_Isend");
  EXPECT_EQ(queue_times[0].operations, 4u);
  EXPECT_EQ(queue_times[0].median_ns, 200);
  EXPECT_EQ(queue_times[0].p95_ns, 400);
  EXPECT_EQ(queue_times[0].max_ns, 400);
}

TEST_F(ReportSections, ConcurrencyFindsTwoCallsInFlightOnTheThreadedRankOnly) {
  const auto concurrency = report().concurrency;
  ASSERT_EQ(concurrency.size(), 1u);
  EXPECT_EQ(concurrency[0].rank, 0);
  EXPECT_EQ(concurrency[0].max_in_flight, 2);
  EXPECT_EQ(concurrency[0].overlapped_ns, 300);
}

TEST_F(ReportSections, CommunicatorsAreNamedAndPhasesSplitTheCalls) {
  const auto full = report();
  ASSERT_EQ(full.communicators.size(), 1u);
  EXPECT_EQ(full.communicators[0].label, "MPI_COMM_WORLD");
  EXPECT_EQ(full.communicators[0].size, 2);
  EXPECT_EQ(full.communicators[0].calls, 13u);
  ASSERT_EQ(full.phases.size(), 1u);
  EXPECT_EQ(full.phases[0].calls, 13u);
  EXPECT_EQ(full.phases[0].ranks, 2);
  EXPECT_FALSE(full.phases[0].end_ns.has_value());
  EXPECT_EQ(full.phases[0].top_functions.front(), "MPI_Allreduce");
}

TEST_F(ReportSections, TablesOtherCollectorsAddAreGatheredInOneNotRecordedLineAtTheEnd) {
  const auto full = report();
  EXPECT_EQ(full.mpit.absent.reason, "no MPI_T samples");
  EXPECT_EQ(full.cuda_copies.absent.reason, "no CUDA copies");
  EXPECT_EQ(full.cuda_copies.absent.how_to_record,
            "run on a GPU with the CUDA collectors: COMMLENS_COLLECTORS=all");
  EXPECT_EQ(full.runtime_decisions.absent.reason, "no GPU runtime decisions");
  const auto text = analysis::render_text_report(full);
  const auto line =
      text.find("\nNot recorded: Phases (user NVTX ranges) (run on a GPU with the CUDA collectors, "
                "in a program that marks NVTX ranges); MPI_T performance variables (the mpit collector");
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_NE(
      text.find("; CUDA copy paths (run on a GPU with the CUDA collectors: COMMLENS_COLLECTORS=all); GPU "
                "runtime decisions (COMMLENS_RUNTIME=on or ab on a GPU, in trace mode)",
                line),
      std::string::npos)
      << text;
  // Nothing after it but the line of sections recorded empty; no section title stands alone.
  EXPECT_EQ(text.find("\nCUDA copy paths\n"), std::string::npos);
  EXPECT_EQ(text.find("MPI_T performance variables:"), std::string::npos);
}

TEST_F(ReportSections, RuntimeDecisionsGroupWhatRanAndWhyTheRuntimeDeclinedPerFunction) {
  {
    TestDatabase database(path_);
    database.execute(
        "INSERT OR IGNORE INTO implementations VALUES (1, 'mpi:host_staged'), (3, 'runtime:one_shot'), "
        "(7, 'runtime:ipc_rendezvous')");
    // Function 4 is MPI_Allreduce, 1 MPI_Send (trace_database.cpp).
    database.execute(R"sql(INSERT INTO runtime_ops (rank, mpi_call_id, function_id, comm_id, start_ns, end_ns,
      implementation, algorithm, decision, reason, bytes, bytes_peer, bytes_host, ipc_opens, chunks, streams,
      decision_source) VALUES
      (0, 1, 4, 0, 0, 1000, 3, 'one_shot', 'runtime', NULL, 4096, 4096, 0, 2, 1, 1, 'table:h100 rule 5'),
      (0, 2, 4, 0, 0, 3000, 3, 'one_shot', 'runtime', NULL, 4096, 4096, 0, 0, 1, 1, 'table:h100 rule 5'),
      (1, 3, 4, 0, 0, 8000, 1, 'host_staged', 'ab_baseline', NULL, 4096, 0, 4096, 0, 1, 0, NULL),
      (1, 4, 4, 0, 0, 500, 0, 'pmpi', 'fallback', 'rank 1: host buffer', 64, 0, 0, 0, 0, 0, NULL),
      (0, 5, 1, 0, 0, 600, 7, 'ipc_rendezvous', 'runtime', NULL, 65536, 65536, 0, 1, 1, 1, NULL),
      (1, 6, 1, 0, 0, 700, 1, 'host_staged', 'fallback', 'below 64 KiB: the host path', 100, 0, 100, 0, 1, 1,
       NULL))sql");
  }
  const auto runtime = report().runtime_decisions;
  ASSERT_TRUE(runtime.absent.empty());
  ASSERT_EQ(runtime.columns.front().title, "function");
  EXPECT_EQ(runtime.columns[6].key, "mean_time_ns");
  EXPECT_EQ(std::get<double>(runtime.rows[0][6]), 8000.0); // a number in JSON, not "8.000 us"
  const auto section = display(runtime);
  // Ordered by total time: staged 8 us, one-shot 4 us, Send staged 0.7 us, rendezvous 0.6 us, pmpi 0.5 us.
  ASSERT_EQ(section.size(), 5u);
  const std::vector<std::string> staged{"MPI_Allreduce",
                                        "mpi:host_staged",
                                        "ab_baseline",
                                        "",
                                        "1",
                                        "4KiB",
                                        analysis::human_duration(8000),
                                        "0.51 GB/s",
                                        "0B",
                                        "4KiB",
                                        ""};
  EXPECT_EQ(section[0], staged);
  EXPECT_EQ(section[1][1], "runtime:one_shot");
  EXPECT_EQ(section[1][4], "2");
  EXPECT_EQ(section[1][6], analysis::human_duration(2000));
  EXPECT_EQ(section[1][7], "2.05 GB/s"); // 8192 B in 4000 ns
  EXPECT_EQ(section[1][10], "table:h100 rule 5");
  EXPECT_EQ(section[2][0], "MPI_Send");
  EXPECT_EQ(section[2][3], "below 64 KiB: the host path");
  EXPECT_EQ(section[3][0], "MPI_Send");
  EXPECT_EQ(section[3][1], "runtime:ipc_rendezvous");
  EXPECT_EQ(section[3][8], "64KiB");
  EXPECT_EQ(section[4][1], "mpi");
  EXPECT_EQ(section[4][3], "rank 1: host buffer");
}

TEST_F(ReportSections, RuntimeDecisionsOfFilesWithoutDecisionSourceLeaveItEmpty) {
  {
    TestDatabase database(path_);
    // As written before the column existed.
    database.execute("DROP TABLE runtime_ops");
    database.execute(R"sql(CREATE TABLE runtime_ops (rank INTEGER, mpi_call_id INTEGER, function_id INTEGER,
      comm_id INTEGER, start_ns INTEGER, end_ns INTEGER, implementation INTEGER, algorithm TEXT, decision TEXT,
      reason TEXT, bytes INTEGER, bytes_peer INTEGER, bytes_host INTEGER, ipc_opens INTEGER, chunks INTEGER,
      streams INTEGER))sql");
    database.execute("INSERT INTO runtime_ops VALUES (0, 1, 0, 0, 0, 1000, 3, 'one_shot', 'runtime', NULL, "
                     "64, 64, 0, 0, 1, 1)");
  }
  const auto section = display(report().runtime_decisions);
  ASSERT_EQ(section.size(), 1u);
  EXPECT_EQ(section[0][10], "");
}

// NCCL calls on a communicator whose NCCL ranks are the run ranks reversed, with the kernels the
// CUDA collector tied to them: enqueue and kernel time per function, and the NCCL peer mapped to
// its run rank in the partner matrix.
class NcclReportSection : public ReportSections {
protected:
  void SetUp() override {
    ReportSections::SetUp();
    TestDatabase database(path_);
    database.execute(R"sql(
INSERT INTO functions (id, name, family) VALUES (20, 'nccl:AllReduce', 'nccl_collective'),
  (21, 'nccl:Send', 'nccl_p2p'), (22, 'nccl:GroupEnd', 'nccl_group');
INSERT INTO communicators (id, rank, local_rank, size, is_inter, members) VALUES
  (4611686018427387905, 0, 1, 2, 0, '-1,0'), (4611686018427387905, 1, 0, 2, 0, '1,-1');
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag, comm_id)
VALUES (1001, 0, 0, 20, 100, 110, 4096, 4096, -1, 0, 4611686018427387905),
       (1002, 0, 0, 20, 200, 230, 4096, 4096, -1, 0, 4611686018427387905),
       (1003, 0, 0, 21, 300, 305, 800, 0, -1, 1, 4611686018427387905),
       (1004, 0, 0, 22, 305, 325, 0, 0, -1, 1, NULL);
INSERT INTO nccl_calls (call_id, rank, datatype, op, stream, root, peer, group_depth) VALUES
  (1001, 0, 7, 0, 0, NULL, NULL, 0), (1002, 0, 7, 0, 0, NULL, NULL, 0),
  (1003, 0, 8, NULL, 0, NULL, 0, 1), (1004, 0, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO nccl_call_stats VALUES
  (0, 20, 4611686018427387905, 12, 0, 7, 0, 0, NULL, NULL, 0, 2, 8192, 8192, 40, 10, 30),
  (0, 21, 4611686018427387905, 9, 0, 8, NULL, 0, NULL, 0, 1, 1, 800, 0, 5, 5, 5),
  (0, 22, -1, -1, 0, NULL, NULL, NULL, NULL, NULL, 1, 1, 0, 0, 20, 20, 20);
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 120, 1120, 0, 7, 'ncclDevKernel_AllReduce', 1001, 1), (0, 1200, 1700, 0, 7, 'ncclDevKernel_AllReduce', 1001, 2),
  (0, 2000, 4500, 0, 7, 'ncclDevKernel_AllReduce', 1002, 3), (0, 5000, 5700, 0, 7, 'ncclDevKernel_SendRecv', 1004, 4),
  (0, 9000, 19000, 0, 7, 'user_kernel', NULL, 5);
INSERT INTO device_spans (call_id, rank, start_ns, end_ns) VALUES (1001, 0, 100, 1150), (1002, 0, 210, 4600);
INSERT INTO device_span_stats VALUES (0, 20, 4611686018427387905, 12, 0, 2, 5440, 1050, 4390);
)sql");
  }
};

TEST_F(NcclReportSection, GivesEnqueueAndKernelTimePerFunctionFromTheLinkedKernels) {
  const auto nccl = report().nccl;
  ASSERT_TRUE(nccl.absent.empty()) << nccl.absent.reason;
  ASSERT_EQ(nccl.columns.size(), 11u);
  const auto section = display(nccl);
  ASSERT_EQ(section.size(), 3u);
  using analysis::human_duration;
  // Ordered by enqueue plus kernel time: 40 + 4000, 20 + 700, 5 + 0 ns. The allreduces' GPU spans
  // (CUDA events) 1050 + 4390 ns; the group's calls have none here.
  EXPECT_EQ(section[0],
            (std::vector<std::string>{"nccl:AllReduce", "ncclFloat32", "ncclSum", "2", "8KiB",
                                      human_duration(40), human_duration(20), "3", human_duration(4000),
                                      human_duration(2000), human_duration(5440)}));
  EXPECT_EQ(section[1], (std::vector<std::string>{"nccl:GroupEnd", "-", "-", "1", "0B", human_duration(20),
                                                  human_duration(20), "1", human_duration(700),
                                                  human_duration(700), "-"}));
  EXPECT_EQ(section[2],
            (std::vector<std::string>{"nccl:Send", "ncclFloat64", "-", "1", "800B", human_duration(5),
                                      human_duration(5), "0", human_duration(0), "-", "-"}));
  const auto markdown = analysis::render_markdown_report(report());
  EXPECT_NE(markdown.find("## NCCL calls: enqueue and device time\n"), std::string::npos) << markdown;
  const auto json = nlohmann::json::parse(run_cli({"report", path_.string(), "--format", "json"}).out);
  EXPECT_EQ(json["nccl"]["rows"][0]["device_operations"], 3);
  EXPECT_EQ(json["nccl"]["rows"][0]["device_time_ns"], 4000);
  EXPECT_EQ(json["nccl"]["rows"][0]["bytes"], 8192);
  EXPECT_EQ(json["nccl"]["rows"][0]["gpu_time_ns"], 5440);
}

// A one-rank out-of-place ncclAllReduce launches no kernel: NCCL copies the send buffer into the
// receive buffer. The copy tied to the call is its device time, beside the kernels of the others.
TEST_F(NcclReportSection, CountsACopyTiedToTheCallAsDeviceTime) {
  TestDatabase(path_).execute(R"sql(
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag, comm_id)
VALUES (1005, 0, 0, 20, 400, 420, 4096, 4096, -1, 0, 4611686018427387905);
INSERT INTO nccl_calls (call_id, rank, datatype, op, stream, root, peer, group_depth) VALUES
  (1005, 0, 7, 0, 0, NULL, NULL, 0);
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, bytes,
  stream, copy_kind, path, link, mpi_call_id, correlation_id) VALUES
  (0, 430, 930, 0, 0, 0, 'device', 'device', 4096, 7, 'DtoD', 'same_device', NULL, 1005, 6),
  (0, 9000, 9900, 0, 0, 0, 'pageable', 'device', 4096, 7, 'HtoD', 'host_staged', NULL, NULL, 7);
)sql");
  const auto section = display(report().nccl);
  ASSERT_EQ(section.size(), 3u);
  using analysis::human_duration;
  // Three AllReduce calls: 3 kernels (4000 ns) of two calls and the copy (500 ns) of the third;
  // the copy outside any call counts nowhere.
  EXPECT_EQ(section[0],
            (std::vector<std::string>{"nccl:AllReduce", "ncclFloat32", "ncclSum", "3", "12KiB",
                                      human_duration(60), human_duration(20), "4", human_duration(4500),
                                      human_duration(1500), human_duration(5440)}));
}

TEST_F(NcclReportSection, WithoutTraceRowsGivesTheHostSideFromTheStatisticsAlone) {
  TestDatabase(path_).execute("DELETE FROM nccl_calls");
  const auto nccl = report().nccl;
  // No device columns (summary mode cannot tie kernels to calls), but the events' GPU time.
  EXPECT_EQ(nccl.columns.size(), 8u);
  const auto section = display(nccl);
  ASSERT_EQ(section.size(), 3u);
  EXPECT_EQ(section[0][0], "nccl:AllReduce");
  EXPECT_EQ(section[0][5], analysis::human_duration(40));
  EXPECT_EQ(section[0][7], analysis::human_duration(5440)); // from device_span_stats
  EXPECT_EQ(section[2][7], "-");
}

TEST_F(NcclReportSection, PartnerMatrixMapsTheNcclPeerToItsRunRank) {
  // NCCL rank 0 of the communicator is run rank 1: the ncclSend joins the MPI traffic from 0 to 1.
  const auto partners = report().partners;
  ASSERT_EQ(partners.size(), 1u);
  EXPECT_EQ(partners[0].to, 1);
  EXPECT_EQ(partners[0].messages, 9u);
  EXPECT_EQ(partners[0].bytes, 4096u + 32u + 800u);
  EXPECT_EQ(partners[0].nccl_messages, 1u);
  EXPECT_EQ(partners[0].nccl_bytes, 800u);
}

TEST_F(ReportSections, NcclSectionIsAbsentWithoutNcclCalls) {
  EXPECT_EQ(report().nccl.absent.reason, "no NCCL calls");
}

TEST(ReportSectionsSummaryMode, TraceOnlySectionsAreNotRecordedWithHowToRecordThem) {
  const auto path = make_temp_directory("commlens-sections-summary") / "commlens.sqlite";
  TestDatabase database(path);
  fill_three_rank_run(database);
  const auto text = analysis::render_text_report(build_report(Database(path)));
  EXPECT_NE(text.find("Not recorded: Request queue times (post to completion) (commlens run --mode trace); "
                      "Concurrent MPI calls across threads (commlens run --mode trace)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(schema v1; summary mode, 3 ranks"), std::string::npos) << text;
}

// A trace that posted no nonblocking request recorded the queue times and has none: nothing to
// show, not "needs trace mode".
TEST_F(ReportSections, ATraceWithoutRequestsHasNothingToShowRatherThanNeedingTraceMode) {
  TestDatabase(path_).execute("DELETE FROM mpi_request_rows");
  const auto text = analysis::render_text_report(report());
  EXPECT_NE(text.find("Request queue times (post to completion) (the program completed no nonblocking "
                      "operation)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("--mode trace"), std::string::npos) << text;
}

TEST_F(ReportSections, MarkdownHasOnePipeTablePerSection) {
  const auto markdown = analysis::render_markdown_report(report());
  EXPECT_NE(markdown.find(
                "## Point-to-point partners, MPI and NCCL (sender to receiver)\n\n| from | to | messages | "
                "bytes | of it NCCL |\n|---|---:|---:|---:|---:|\n| 0 | 1 | 8 | 4.0KiB | 0B |\n"),
            std::string::npos)
      << markdown;
  // One notation for size bins: the label, never the key.
  EXPECT_NE(markdown.find("| [1KiB, 2KiB) | 4 |"), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find("2^10"), std::string::npos);
}

TEST_F(ReportSections, HtmlIsSelfContainedWithPlots) {
  const auto result = run_cli({"report", path_.string(), "--format", "html"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out.rfind("<!DOCTYPE html>", 0), 0u);
  // Findings first: their section comes before every chart and table.
  const auto findings = result.out.find("<h2 id=\"findings\">");
  ASSERT_NE(findings, std::string::npos);
  EXPECT_LT(findings, result.out.find("<svg"));
  EXPECT_NE(result.out.find("<a href=\"#partners\">Who sends to whom</a>"), std::string::npos);
  EXPECT_NE(result.out.find("<title>rank 0 to rank 1: 8 messages, 4.0KiB</title>"), std::string::npos);
  EXPECT_NE(result.out.find("<title>[1KiB, 2KiB): 4 calls, 4KiB</title>"), std::string::npos);
  // MPI_Barrier moves no data: no histogram of it.
  EXPECT_EQ(result.out.find("<figcaption>MPI_Barrier</figcaption>"), std::string::npos);
  // Nothing is fetched: no scripts, links or remote images.
  EXPECT_EQ(result.out.find("<script"), std::string::npos);
  EXPECT_EQ(result.out.find("<link"), std::string::npos);
  EXPECT_EQ(result.out.find("src="), std::string::npos);
}

TEST_F(ReportSections, JsonReportHoldsEverySection) {
  const auto result = run_cli({"report", path_.string(), "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["mode"], "trace");
  EXPECT_EQ(json["partners"][0]["messages"], 8);
  EXPECT_EQ(json["communicators"][0]["id"], "0"); // ids as strings: NCCL's are above 2^53
  EXPECT_EQ(json["queue_times"][0]["median_ns"], 200);
  EXPECT_EQ(json["concurrency"][0]["max_in_flight"], 2);
  EXPECT_EQ(json["mpit"]["absent"]["reason"], "no MPI_T samples");
  EXPECT_TRUE(json["queue_times_absent"].is_null());
  EXPECT_TRUE(json["findings"].is_array());
}

TEST(QuantileSketch, IsExactForSmallValuesAndWithinOneBucketForLargeOnes) {
  analysis::QuantileSketch sketch;
  for (int value = 1; value <= 100; ++value)
    sketch.add(value);
  EXPECT_EQ(sketch.quantile(0.5), 50);
  EXPECT_EQ(sketch.quantile(0.95), 95);
  EXPECT_EQ(sketch.max(), 100);
  analysis::QuantileSketch large;
  large.add(1'000'003);
  EXPECT_LE(large.quantile(0.5), 1'000'003);
  EXPECT_GE(large.quantile(0.5), 1'000'003 - 1'000'003 / 128);
}

} // namespace
} // namespace commlens::test
