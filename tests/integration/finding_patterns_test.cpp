// examples/finding_patterns under `mpirun -np 4`: each program built to show one pattern gets
// exactly the findings that pattern implies from `commlens report --format json`, with the cost its
// sleeps set, and the balanced program gets none. Summary mode finds what needs no trace and says
// which rules it could not apply.
#include "harness/cli.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace commlens::integration {
namespace {

constexpr int kIterations = 40;
constexpr std::int64_t kDelayNs = 20'000'000; // the program's default 20 ms
constexpr int kPairs = kRanks / 2;

struct Profiled {
  JobResult job;
  nlohmann::json report;
};

const Profiled& profile(const std::string& pattern, const std::string& mode, int iterations = kIterations,
                        std::map<std::string, std::string> environment = {}) {
  static std::map<std::string, Profiled> runs;
  const auto key = pattern + "/" + mode;
  auto found = runs.find(key);
  if (found == runs.end()) {
    Profiled run{run_profiled_job(
                     {.command = {example_program("finding_patterns"), pattern, std::to_string(iterations)},
                      .mode = mode,
                      .environment = std::move(environment)}),
                 nullptr};
    if (run.job.exit_code == 0)
      run.report = nlohmann::json::parse(
          commlens_output("report --format json " + run.job.merged_database().string()), nullptr, false);
    found = runs.emplace(key, std::move(run)).first;
  }
  return found->second;
}

std::set<std::string> finding_ids(const nlohmann::json& report) {
  std::set<std::string> ids;
  for (const auto& finding : report["findings"])
    ids.insert(finding["id"].get<std::string>());
  return ids;
}

const nlohmann::json& finding(const nlohmann::json& report, const std::string& id) {
  for (const auto& one : report["findings"])
    if (one["id"] == id)
      return one;
  throw std::runtime_error("no finding " + id);
}

// A wait the sleeps cause: `sleeps` of the delay, give or take what two shared cores add (a rank
// waiting for a core waits longer).
void expect_cost_near(const nlohmann::json& found, double sleeps) {
  const auto cost = found["cost_ns"].get<double>();
  EXPECT_GE(cost, 0.7 * sleeps * kDelayNs) << found.dump(2);
  EXPECT_LE(cost, 2.0 * sleeps * kDelayNs) << found.dump(2);
}

class FindingPatterns : public ::testing::Test {
protected:
  static const nlohmann::json& traced(const std::string& pattern, int iterations = kIterations,
                                      std::map<std::string, std::string> environment = {}) {
    const auto& run = profile(pattern, "trace", iterations, std::move(environment));
    EXPECT_EQ(run.job.exit_code, 0) << run.job.describe();
    return run.report;
  }
};

TEST_F(FindingPatterns, LateSendersAreFoundOnTheWorldCommunicatorWithTheTimeTheReceiversWaited) {
  const auto& report = traced("late-sender");
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"late-sender@MPI_COMM_WORLD"})
      << report["findings"].dump(2);
  // Every iteration one rank of each pair waits one delay in MPI_Recv.
  const auto& late = finding(report, "late-sender@MPI_COMM_WORLD");
  expect_cost_near(late, kIterations * kPairs);
  EXPECT_NE(late["evidence"][0].get<std::string>().find("in MPI_Recv for rank"), std::string::npos);
}

TEST_F(FindingPatterns, LateReceiversAreFoundWhereSynchronousSendsWaitForTheirReceives) {
  const auto& report = traced("late-receiver");
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"late-receiver@MPI_COMM_WORLD"})
      << report["findings"].dump(2);
  const auto& late = finding(report, "late-receiver@MPI_COMM_WORLD");
  expect_cost_near(late, kIterations * kPairs);
  EXPECT_NE(late["evidence"][0].get<std::string>().find("in MPI_Ssend for rank"), std::string::npos);
}

TEST_F(FindingPatterns, RanksWaitingForALateRankAtAllreduceAreAWaitAtCollective) {
  const auto& report = traced("collective-wait");
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"wait-at-collective@MPI_COMM_WORLD"})
      << report["findings"].dump(2);
  // Every iteration the three others wait one delay for the rank that slept.
  expect_cost_near(finding(report, "wait-at-collective@MPI_COMM_WORLD"), kIterations * (kRanks - 1));
}

TEST_F(FindingPatterns, ALastRankWorkingTwiceAsLongIsAnImbalanceOfItsPhaseAndAWaitAtTheAllreduce) {
  const auto& report = traced("imbalance");
  EXPECT_EQ(finding_ids(report),
            (std::set<std::string>{"load-imbalance@phase-1", "wait-at-collective@MPI_COMM_WORLD"}))
      << report["findings"].dump(2);
  // The three others lose one delay an iteration each, outside MPI as the slowest works longer.
  const auto& imbalance = finding(report, "load-imbalance@phase-1");
  expect_cost_near(imbalance, kIterations * (kRanks - 1));
  EXPECT_NE(imbalance["evidence"][0].get<std::string>().find("rank 3 worked"), std::string::npos);
}

// 100,000 exchanges per rank, so that the storm, not MPI_Init, takes most of the run.
TEST_F(FindingPatterns, AStormOfFourByteExchangesIsASmallMessageStorm) {
  constexpr int kStormIterations = 100;
  const auto& report = traced("small-messages", kStormIterations);
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"small-messages@MPI_Sendrecv"})
      << report["findings"].dump(2);
  EXPECT_EQ(finding(report, "small-messages@MPI_Sendrecv")["evidence"][0].get<std::string>().rfind(
                std::to_string(kStormIterations * 1000) + " calls per rank,", 0),
            0u);
}

TEST_F(FindingPatterns, MessagesSentBeforeTheirReceivesPileUpInTheUnexpectedQueue) {
  // The queue is read at MPI_Barrier's boundaries, where it is longest.
  const auto& report = traced("unexpected-queue", kIterations, {{"COMMLENS_PVAR_CALLS", "MPI_Barrier"}});
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"unexpected-queue@MPI_COMM_WORLD"})
      << report["findings"].dump(2);
  // The 64 messages are all in the queue when the barrier the receiver took them in during ends.
  const auto& queue = finding(report, "unexpected-queue@MPI_COMM_WORLD");
  EXPECT_EQ(queue["measured"], 64.0) << queue.dump(2);
  EXPECT_NE(queue["evidence"][0].get<std::string>().find("in MPI_Barrier, 64 of them from its rank"),
            std::string::npos)
      << queue.dump(2);
}

TEST_F(FindingPatterns, ACommunicatorAndADatatypeMadeEveryStepAreChurn) {
  const auto& report = traced("churn");
  EXPECT_EQ(finding_ids(report), (std::set<std::string>{"communicator-churn@steps", "datatype-churn@steps"}))
      << report["findings"].dump(2);
  EXPECT_EQ(finding(report, "communicator-churn@steps")["measured"], 1.0);
  EXPECT_EQ(finding(report, "datatype-churn@steps")["measured"], 1.0);
}

TEST_F(FindingPatterns, ARunThatOnlyStartsAndStopsIsDominatedByStartUpAndTearDown) {
  const auto& report = traced("short");
  EXPECT_EQ(finding_ids(report), std::set<std::string>{"startup-teardown@run"}) << report["findings"].dump(2);
  // Rules that weigh time are not applied to a run this short, and the report says so.
  ASSERT_EQ(report["findings_not_analysed"].size(), 1u) << report.dump(2);
  EXPECT_NE(report["findings_not_analysed"][0].get<std::string>().find("the run is too short"),
            std::string::npos);
}

TEST_F(FindingPatterns, ABalancedProgramWithLargeMessagesHasNoFinding) {
  const auto& report = traced("balanced");
  EXPECT_TRUE(report["findings"].empty()) << report["findings"].dump(2);
  EXPECT_TRUE(report["findings_not_analysed"].empty()) << report["findings_not_analysed"].dump(2);
}

TEST_F(FindingPatterns, SummaryModeFindsWhatNeedsNoTraceAndSaysWhatItCouldNotAnalyse) {
  const auto& run = profile("imbalance", "summary");
  ASSERT_EQ(run.job.exit_code, 0) << run.job.describe();
  EXPECT_EQ(finding_ids(run.report), std::set<std::string>{"load-imbalance@phase-1"})
      << run.report["findings"].dump(2);
  ASSERT_EQ(run.report["findings_not_analysed"].size(), 1u);
  EXPECT_NE(run.report["findings_not_analysed"][0].get<std::string>().find("commlens run --mode trace"),
            std::string::npos);
}

} // namespace
} // namespace commlens::integration
