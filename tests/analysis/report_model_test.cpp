// The report model's numbers for the hand-made three-rank run in test_database.cpp.
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/report.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace commlens::analysis {
namespace {

class ReportModel : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = test::make_temp_directory("commlens-report") / "commlens.sqlite";
    test::TestDatabase database(path_);
    test::fill_three_rank_run(database);
  }

  Report report(const ReportFilter& filter = {}) { return build_report(Database(path_), filter); }

  static const FunctionStats& function(const Report& report, std::string_view name) {
    const auto found = std::find_if(report.functions.begin(), report.functions.end(),
                                    [&](const FunctionStats& function) { return function.name == name; });
    if (found == report.functions.end())
      throw std::runtime_error("no function " + std::string(name));
    return *found;
  }

  std::filesystem::path path_;
};

TEST_F(ReportModel, RunMetadataComesFromTheRunTableSortedByKey) {
  const auto run = report().run;
  ASSERT_EQ(run.size(), 2u);
  EXPECT_EQ(run[0], (std::pair<std::string, std::string>{"command", "mpirun -np 3 ./app"}));
  EXPECT_EQ(run[1], (std::pair<std::string, std::string>{"mode", "summary"}));
}

TEST_F(ReportModel, TimeInMpiPerRankSumsCallStatsAndDividesByApplicationTime) {
  const auto ranks = report().ranks;
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].mpi_ns, 1'000'001'400);
  EXPECT_EQ(ranks[1].mpi_ns, 2'000'002'000);
  EXPECT_EQ(ranks[2].mpi_ns, 4'000'000'000);
  EXPECT_EQ(ranks[2].application_ns, 20'000'000'000);
  EXPECT_EQ(ranks[0].calls, 16u);
  EXPECT_EQ(ranks[2].host, "node-b");
  EXPECT_DOUBLE_EQ(*ranks[0].mpi_share, 0.10000014);
  EXPECT_DOUBLE_EQ(*ranks[1].mpi_share, 0.2000002);
  EXPECT_DOUBLE_EQ(*ranks[2].mpi_share, 0.2);
}

TEST_F(ReportModel, SpreadAcrossRanksNamesTheExtremesAndTheImbalance) {
  const auto spread = *report().mpi_time_spread;
  EXPECT_EQ(spread.min_rank, 0);
  EXPECT_EQ(spread.max_rank, 2);
  EXPECT_DOUBLE_EQ(spread.min, 1'000'001'400.0);
  EXPECT_DOUBLE_EQ(spread.max, 4'000'000'000.0);
  EXPECT_NEAR(spread.mean, 2'333'334'466.6667, 1e-3);
  EXPECT_NEAR(spread.imbalance, 0.7142848816, 1e-9); // max / mean - 1
}

TEST_F(ReportModel, AnUnfinalizedRankHasNoShareAndSoNoShareSpread) {
  {
    test::TestDatabase database(path_);
    database.execute("UPDATE ranks SET finalize_ns = NULL, finalized = 0 WHERE rank = 1");
  }
  const auto result = report();
  EXPECT_FALSE(result.ranks[1].application_ns.has_value());
  EXPECT_FALSE(result.ranks[1].mpi_share.has_value());
  EXPECT_FALSE(result.mpi_share_spread.has_value());
  EXPECT_TRUE(result.mpi_time_spread.has_value());
}

TEST_F(ReportModel, FunctionsAreOrderedByTotalTime) {
  const auto functions = report().functions;
  ASSERT_EQ(functions.size(), 4u);
  EXPECT_EQ(functions[0].name, "MPI_Allreduce");
  EXPECT_EQ(functions[1].name, "MPI_Barrier");
  EXPECT_EQ(functions[2].name, "MPI_Recv");
  EXPECT_EQ(functions[3].name, "MPI_Send");
}

TEST_F(ReportModel, FunctionTotalsSumCallsBytesAndTimeAcrossRanksAndBins) {
  const auto result = report();
  const auto& send = function(result, "MPI_Send");
  EXPECT_EQ(send.family, "p2p");
  EXPECT_EQ(send.calls, 6u);
  EXPECT_EQ(send.bytes_sent, 14'096u);
  EXPECT_EQ(send.bytes_recv, 0u);
  EXPECT_EQ(send.time_total_ns, 1400);
  EXPECT_EQ(send.time_min_ns, 90);
  EXPECT_EQ(send.time_max_ns, 600);
  const auto& allreduce = function(result, "MPI_Allreduce");
  EXPECT_EQ(allreduce.calls, 30u);
  EXPECT_EQ(allreduce.bytes_sent, 240u);
  EXPECT_EQ(allreduce.bytes_recv, 240u);
  EXPECT_EQ(allreduce.time_total_ns, 6'000'000'000);
  EXPECT_EQ(allreduce.time_min_ns, 50'000'000);
  EXPECT_EQ(allreduce.time_max_ns, 400'000'000);
  EXPECT_NEAR(allreduce.share_of_mpi_time, 0.8571424408, 1e-9);
}

TEST_F(ReportModel, SizeHistogramHasOneBinPerPowerOfTwoWithStableKeys) {
  const auto result = report();
  const auto& histogram = function(result, "MPI_Send").size_histogram;
  ASSERT_EQ(histogram.size(), 2u);
  EXPECT_EQ(histogram[0].size_bin, 10);
  EXPECT_EQ(histogram[0].key, "2^10");
  EXPECT_EQ(histogram[0].label, "[1KiB, 2KiB)");
  EXPECT_EQ(histogram[0].calls, 4u);
  EXPECT_EQ(histogram[0].bytes_sent, 4096u);
  EXPECT_EQ(histogram[0].time_total_ns, 400);
  EXPECT_EQ(histogram[1].key, "2^12");
  EXPECT_EQ(histogram[1].calls, 2u);
  EXPECT_EQ(histogram[1].bytes_sent, 10'000u);

  const auto& barrier = function(result, "MPI_Barrier").size_histogram;
  ASSERT_EQ(barrier.size(), 1u);
  EXPECT_EQ(barrier[0].key, "0");
  EXPECT_EQ(barrier[0].calls, 3u);

  const auto& allreduce = function(result, "MPI_Allreduce").size_histogram;
  ASSERT_EQ(allreduce.size(), 1u); // three ranks' rows fold into one bin
  EXPECT_EQ(allreduce[0].calls, 30u);
}

TEST_F(ReportModel, RankFilterKeepsOnlyThatRanksCalls) {
  const auto result = report({.rank = 0, .phase = std::nullopt});
  ASSERT_EQ(result.ranks.size(), 1u);
  EXPECT_EQ(result.ranks[0].rank, 0);
  ASSERT_EQ(result.functions.size(), 2u);
  EXPECT_EQ(function(result, "MPI_Allreduce").calls, 10u);
  EXPECT_EQ(function(result, "MPI_Send").calls, 6u);
}

TEST_F(ReportModel, PhaseFilterKeepsThatPhasesCallsAndUsesThePhaseSpanAsApplicationTime) {
  const auto result = report({.rank = std::nullopt, .phase = 1});
  EXPECT_EQ(result.ranks[0].application_ns, 6'000'000'000); // open phase ends at finalize
  EXPECT_EQ(result.ranks[0].mpi_ns, 1'000'001'000);
  EXPECT_EQ(result.ranks[2].mpi_ns, 3'000'000'000);
  const auto& send = function(result, "MPI_Send");
  EXPECT_EQ(send.calls, 2u);
  ASSERT_EQ(send.size_histogram.size(), 1u);
  EXPECT_EQ(send.size_histogram[0].key, "2^12");
  EXPECT_EQ(std::count_if(result.functions.begin(), result.functions.end(),
                          [](const FunctionStats& function) { return function.name == "MPI_Barrier"; }),
            0);
}

TEST_F(ReportModel, DroppedEventsAreSummedOverRanks) {
  const auto result = report();
  EXPECT_EQ(result.dropped_events, 5u);
  EXPECT_EQ(result.summary_overflow, 2u);
  EXPECT_EQ(result.ranks[1].dropped_events, 5u);
}

// Rank 1 called MPI from four threads whose calls overlapped: its 2'000'002'000 ns summed over
// threads took 600'000'000 ns of wall time (ranks.mpi_wall_ns), as the profiler measured it.
class MultithreadedRank : public ReportModel {
protected:
  void SetUp() override {
    ReportModel::SetUp();
    test::TestDatabase database(path_);
    database.execute(R"sql(
UPDATE ranks SET threads = 4, mpi_wall_ns = 600000000 WHERE rank = 1;
UPDATE ranks SET threads = 1, mpi_wall_ns = 1000001400 WHERE rank = 0;
INSERT INTO thread_stats (rank, thread, phase, calls, time_in_mpi_ns) VALUES
  (0, 0, 0, 4, 400), (0, 0, 1, 12, 1000001000),
  (1, 0, 0, 4, 2000), (1, 1, 1, 4, 800000000), (1, 2, 1, 3, 600000000), (1, 3, 1, 3, 600000000);
)sql");
  }
};

TEST_F(MultithreadedRank, TimeInMpiIsTheWallTimeWithAThreadInsideNotTheSumOverThreads) {
  const auto ranks = report().ranks;
  EXPECT_EQ(ranks[1].mpi_ns, 600'000'000);
  EXPECT_EQ(ranks[1].mpi_thread_sum_ns, 2'000'002'000);
  EXPECT_EQ(ranks[1].threads, 4);
  EXPECT_FALSE(ranks[1].mpi_ns_summed_over_threads);
  EXPECT_DOUBLE_EQ(*ranks[1].mpi_share, 0.06);
  EXPECT_EQ(ranks[0].mpi_ns, 1'000'001'400);
  EXPECT_EQ(ranks[2].mpi_ns, 4'000'000'000) << "a file without the wall time: the sum, as before";
}

TEST_F(MultithreadedRank, EveryThreadOfAMultithreadedRankHasItsOwnRow) {
  const auto result = report();
  ASSERT_EQ(result.threads.size(), 4u) << "rank 0 called from one thread: no rows";
  EXPECT_EQ(result.threads[0].rank, 1);
  EXPECT_EQ(result.threads[0].calls, 4u);
  EXPECT_EQ(result.threads[1].thread, 1);
  EXPECT_EQ(result.threads[1].mpi_ns, 800'000'000);
  EXPECT_DOUBLE_EQ(*result.threads[1].mpi_share, 0.08);
  EXPECT_TRUE(result.threads_absent.empty());
}

TEST_F(MultithreadedRank, APhaseFilterAddsUpTheThreadsAndSaysSo) {
  const auto ranks = report({.rank = std::nullopt, .phase = 1}).ranks;
  EXPECT_EQ(ranks[1].mpi_ns, 2'000'000'000);
  EXPECT_TRUE(ranks[1].mpi_ns_summed_over_threads);
  EXPECT_FALSE(ranks[0].mpi_ns_summed_over_threads) << "one thread: the sum is the wall time";
}

TEST_F(ReportModel, ARunWhoseRanksCalledFromOneThreadHasNoThreadRows) {
  const auto result = report();
  EXPECT_TRUE(result.threads.empty());
  EXPECT_EQ(result.threads_absent.reason, "every rank made its MPI calls from one thread");
  EXPECT_TRUE(result.threads_absent.how_to_record.empty()) << "recorded, and there is nothing to show";
}

TEST_F(ReportModel, AFilterOnARankOrPhaseThatDoesNotExistIsAnError) {
  EXPECT_THROW(report({.rank = 7, .phase = std::nullopt, .nvtx_range = std::nullopt}), FilterError);
  EXPECT_THROW(report({.rank = std::nullopt, .phase = 9, .nvtx_range = std::nullopt}), FilterError);
}

TEST(EmptyReport, ADatabaseWithoutCallsHasNoFunctionsAndNoSpread) {
  const auto path = test::make_temp_directory("commlens-empty") / "commlens.sqlite";
  { test::TestDatabase database(path); }
  const auto result = build_report(Database(path));
  EXPECT_TRUE(result.ranks.empty());
  EXPECT_TRUE(result.functions.empty());
  EXPECT_FALSE(result.mpi_time_spread.has_value());
}

} // namespace
} // namespace commlens::analysis
