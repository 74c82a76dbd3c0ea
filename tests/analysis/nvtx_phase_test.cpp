// User NVTX ranges as phases: the section lists each range path with the calls placed in it, and
// `--phase NAME` splits every table, on the trace run of trace_database.cpp plus these ranges:
//   rank 0: train [0, 5000) holding step [1500, 3500); io [9000, 20000); an MPI-domain range
//           around the first MPI_Send and an NCCL-domain range inside step, which must not
//           become phases (libraries' own ranges)
//   rank 1: train [0, 5000)
// so train holds rank 0's MPI_Send at 1000 and 4000 and its MPI_Allreduce at 500 (thread 1) and
// rank 1's four MPI_Recv; train/step the MPI_Send at 2000 and 3000; io the four MPI_Isend.
#include "cli_runner.hpp"
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/report.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace commlens::test {
namespace {

using analysis::build_report;
using analysis::Database;
using analysis::ReportFilter;

constexpr std::string_view kRanges = R"sql(
INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES
  (0, 0, 5000, NULL, 'train'), (0, 1500, 3500, NULL, 'step'), (0, 9000, 20000, 'app', 'io'),
  (0, 1000, 1100, 'MPI', 'MPI_Send'), (0, 1900, 2100, 'NCCL', 'ncclAllReduce'), (1, 0, 5000, NULL, 'train');
-- Tie the four queued MPI_Isend requests to the MPI_Isend calls that posted them (ids 5 to 8:
-- rank 0's first lane holds the four MPI_Send, then the four MPI_Isend). The view has no update
-- trigger: its storage is updated, keeping completion_call_id (stored as an offset from request_id).
UPDATE mpi_request_rows SET request_id = request_id - 95, completion_offset = completion_offset + 95;
)sql";

const analysis::FunctionStats* find_function(const analysis::Report& report, std::string_view name) {
  const auto found = std::find_if(report.functions.begin(), report.functions.end(),
                                  [&](const auto& function) { return function.name == name; });
  return found == report.functions.end() ? nullptr : &*found;
}

class NvtxPhases : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-nvtx") / "commlens.sqlite";
    TestDatabase database(path_);
    fill_trace_run(database);
    database.execute(kRanges);
  }
  analysis::Report report(std::string range) const {
    return build_report(Database(path_), ReportFilter{.nvtx_range = std::move(range)});
  }
  std::filesystem::path path_;
};

TEST_F(NvtxPhases, EachRangePathIsAPhaseWithTheCallsThatStartInsideIt) {
  const auto phases = build_report(Database(path_)).nvtx_phases;
  ASSERT_EQ(phases.size(), 3u); // the MPI and NCCL domains' ranges are not phases
  EXPECT_EQ(phases[0].path, "io");
  EXPECT_EQ(phases[0].calls, 4u);
  EXPECT_EQ(phases[0].bytes, 32u);
  EXPECT_EQ(phases[0].time_total_ns, 40);
  EXPECT_EQ(phases[1].path, "train");
  EXPECT_EQ(phases[1].ranks, 2);
  EXPECT_EQ(phases[1].ranges, 2u);
  EXPECT_EQ(phases[1].range_time_ns, 10000);
  EXPECT_EQ(phases[1].calls, 7u);
  EXPECT_EQ(phases[1].bytes, 2048u + 128u + 4096u);
  EXPECT_EQ(phases[1].time_total_ns, 200 + 3000 + 400);
  EXPECT_EQ(phases[1].top_functions, (std::vector<std::string>{"MPI_Allreduce", "MPI_Recv", "MPI_Send"}));
  EXPECT_EQ(phases[2].path, "train/step");
  EXPECT_EQ(phases[2].calls, 2u);
  EXPECT_EQ(phases[2].range_time_ns, 2000);
}

TEST_F(NvtxPhases, SelectingARangeSplitsEveryTableAndIncludesNestedRanges) {
  const auto train = report("train");
  ASSERT_NE(find_function(train, "MPI_Send"), nullptr);
  EXPECT_EQ(find_function(train, "MPI_Send")->calls, 4u);
  EXPECT_EQ(find_function(train, "MPI_Recv")->calls, 4u);
  EXPECT_EQ(find_function(train, "MPI_Allreduce")->calls, 1u);
  EXPECT_EQ(find_function(train, "MPI_Isend"), nullptr);
  ASSERT_EQ(train.partners.size(), 1u);
  EXPECT_EQ(train.partners[0].messages, 4u); // the MPI_Isend to rank 1 lie in io
  EXPECT_EQ(train.partners[0].bytes, 4096u);
  EXPECT_TRUE(train.queue_times.empty());
  ASSERT_EQ(train.communicators.size(), 1u);
  EXPECT_EQ(train.communicators[0].calls, 9u);
  ASSERT_EQ(train.ranks.size(), 2u);
  EXPECT_EQ(train.ranks[0].application_ns, 5000); // the time inside train on rank 0
  EXPECT_EQ(train.ranks[0].mpi_ns, 400 + 3000);
  EXPECT_DOUBLE_EQ(*train.ranks[0].mpi_share, 3400.0 / 5000.0);
  ASSERT_EQ(train.concurrency.size(), 1u);
  EXPECT_EQ(train.concurrency[0].max_in_flight, 2);
}

TEST_F(NvtxPhases, SelectingANestedPathKeepsOnlyItsCalls) {
  const auto step = report("train/step");
  ASSERT_EQ(step.functions.size(), 1u);
  EXPECT_EQ(step.functions[0].name, "MPI_Send");
  EXPECT_EQ(step.functions[0].calls, 2u);
  EXPECT_EQ(step.functions[0].bytes_sent, 2048u);
  EXPECT_EQ(step.ranks[0].application_ns, 2000);
  EXPECT_FALSE(step.ranks[1].application_ns.has_value()); // rank 1 never entered train/step
  ASSERT_EQ(step.nvtx_phases.size(), 1u);
  EXPECT_EQ(step.nvtx_phases[0].path, "train/step");
}

TEST_F(NvtxPhases, QueueTimesFollowThePostingCall) {
  const auto io = report("io");
  ASSERT_EQ(io.queue_times.size(), 1u);
  EXPECT_EQ(io.queue_times[0].operations, 4u);
  EXPECT_EQ(io.queue_times[0].median_ns, 200);
}

TEST_F(NvtxPhases, TheDatabaseReadsWholeAgainAfterAFilteredReport) {
  const Database database(path_);
  build_report(database, ReportFilter{.nvtx_range = "io"});
  const auto whole = build_report(database);
  ASSERT_EQ(whole.communicators.size(), 1u);
  EXPECT_EQ(whole.communicators[0].calls, 13u);
}

TEST_F(NvtxPhases, AnUnknownRangeOrAPrefixOfANameIsAFilterError) {
  EXPECT_THROW(report("nope"), analysis::FilterError);
  EXPECT_THROW(report("trai"), analysis::FilterError);
  EXPECT_THROW(report("MPI_Send"), analysis::FilterError); // commlens' own domain
}

TEST(NvtxPhasesInSummaryMode, RangesAreListedButCallsAreNotPlacedAndTheFilterIsRefused) {
  const auto path = make_temp_directory("commlens-nvtx-summary") / "commlens.sqlite";
  {
    TestDatabase database(path);
    fill_three_rank_run(database);
    database.execute("INSERT INTO nvtx_ranges VALUES (0, 0, 4000000000, NULL, 'warmup')");
  }
  const auto report = build_report(Database(path));
  EXPECT_FALSE(report.nvtx_calls_placed);
  ASSERT_EQ(report.nvtx_phases.size(), 1u);
  EXPECT_EQ(report.nvtx_phases[0].ranges, 1u);
  EXPECT_EQ(report.nvtx_phases[0].calls, 0u);
  try {
    build_report(Database(path), ReportFilter{.nvtx_range = "warmup"});
    FAIL() << "a summary database cannot be split by NVTX range";
  } catch (const analysis::FilterError& error) {
    EXPECT_NE(std::string(error.what()).find("summary mode"), std::string::npos) << error.what();
  }
}

TEST_F(NvtxPhases, CliPhaseTakesANumberOrARangeName) {
  const auto by_name = run_cli({"report", path_.string(), "--phase", "train", "--format", "json"});
  ASSERT_EQ(by_name.status, 0) << by_name.err;
  const auto json = nlohmann::json::parse(by_name.out);
  EXPECT_EQ(json["filter"]["nvtx_range"], "train");
  EXPECT_TRUE(json["filter"]["phase"].is_null());
  EXPECT_EQ(json["nvtx_phases"].size(), 2u);
  const auto by_number = run_cli({"report", path_.string(), "--phase", "0", "--format", "json"});
  ASSERT_EQ(by_number.status, 0) << by_number.err;
  EXPECT_EQ(nlohmann::json::parse(by_number.out)["filter"]["phase"], 0);
  const auto unknown = run_cli({"report", path_.string(), "--phase", "nope"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no NVTX range 'nope'"), std::string::npos) << unknown.err;
}

} // namespace
} // namespace commlens::test
