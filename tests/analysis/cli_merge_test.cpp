// `commlens merge` (and `commlens run` merging what a job left) over rank files built from the
// real schema, read back through `commlens report`.
#include "cli_runner.hpp"
#include "commlens/profiler/merge.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

namespace commlens::test {
namespace {

namespace fs = std::filesystem;

fs::path make_two_rank_files() {
  const auto directory = make_temp_directory("commlens-cli-merge");
  for (int rank = 0; rank < 2; ++rank) {
    TestDatabase database(directory / rank_database_name(rank));
    fill_rank_file(database, rank);
  }
  return directory;
}

TEST(CliMerge, MergedRankFilesReportEveryRanksCalls) {
  const auto directory = make_two_rank_files();
  const auto merged = (directory / "merged.sqlite").string();
  const auto merge = run_cli({"merge", directory.string(), "-o", merged});
  ASSERT_EQ(merge.status, 0) << merge.err;
  EXPECT_NE(merge.err.find("merged 2 of 2 ranks into " + merged), std::string::npos) << merge.err;

  const auto report = run_cli({"report", merged, "--format", "json"});
  ASSERT_EQ(report.status, 0) << report.err;
  const auto json = nlohmann::json::parse(report.out);
  ASSERT_EQ(json["ranks"].size(), 2u);
  EXPECT_EQ(json["ranks"][1]["mpi_ns"], 2'000'000);
  EXPECT_EQ(json["functions"][0]["calls"], 3);
  EXPECT_EQ(json["functions"][0]["bytes_sent"], 24);
}

std::set<std::string> files_in(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory))
    names.insert(entry.path().filename().string());
  return names;
}

TEST(CliMerge, RemovesTheRankFilesAfterMergingEveryRank) {
  const auto directory = make_two_rank_files();
  const auto merge = run_cli({"merge", directory.string()});
  ASSERT_EQ(merge.status, 0) << merge.err;
  EXPECT_EQ(files_in(directory), std::set<std::string>{"commlens.sqlite"});
}

TEST(CliMerge, KeepsTheRankFilesWhenAskedByFlagOrSetting) {
  const std::set<std::string> all = {"commlens.sqlite", "rank-00000.sqlite", "rank-00001.sqlite"};
  const auto by_flag = make_two_rank_files();
  ASSERT_EQ(run_cli({"merge", by_flag.string(), "--keep-rank-files"}).status, 0);
  EXPECT_EQ(files_in(by_flag), all);
  const auto by_setting = make_two_rank_files();
  ASSERT_EQ(run_cli({"merge", by_setting.string()}, "COMMLENS_KEEP_RANK_FILES=1").status, 0);
  EXPECT_EQ(files_in(by_setting), all);
}

TEST(CliMerge, SaysWhatTheRunLost) {
  const auto directory = make_two_rank_files();
  {
    TestDatabase rank_one(directory / rank_database_name(1));
    rank_one.execute("UPDATE ranks SET dropped_events = 6, summary_overflow = 2");
  }
  const auto merge = run_cli({"merge", directory.string()});
  ASSERT_EQ(merge.status, 0) << merge.err;
  EXPECT_NE(
      merge.err.find("commlens: WARNING: data lost: 6 trace events dropped, 2 calls not counted (summary "
                     "table full)\n"),
      std::string::npos)
      << merge.err;
  const auto clean = run_cli({"merge", make_two_rank_files().string()});
  EXPECT_EQ(clean.err.find("data lost"), std::string::npos) << clean.err;
}

// Rank 1's file of the two-rank job never arrived: merge records the job's two ranks, holds one.
std::string merge_without_rank_one() {
  const auto directory = make_temp_directory("commlens-cli-missing-rank");
  {
    TestDatabase database(directory / rank_database_name(0));
    fill_rank_file(database, 0);
  }
  const auto merged = (directory / "merged.sqlite").string();
  const auto merge = run_cli({"merge", directory.string(), "-o", merged});
  EXPECT_EQ(merge.status, 0) << merge.err;
  return merged;
}

TEST(CliMissingRanks, EveryAnalysingCommandRefusesARunWithAMissingRankInOneLine) {
  const auto merged = merge_without_rank_one();
  const std::vector<std::vector<std::string>> commands = {{"report", merged},
                                                          {"histogram", merged},
                                                          {"export", merged, "--format", "chrome"},
                                                          {"compare", merged, merged}};
  for (const auto& command : commands) {
    const auto result = run_cli(command);
    EXPECT_EQ(result.status, 2) << command[0];
    EXPECT_EQ(result.err,
              "commlens: error: " + merged +
                  ": incomplete run: rank 1 of 2 missing (rank file never arrived or could not be "
                  "merged); --allow-missing-ranks analyses the 1 present\n")
        << command[0];
  }
}

TEST(CliMissingRanks, AllowingThemReportsThePresentRanksAndSaysWhichAreMissing) {
  const auto merged = merge_without_rank_one();
  const auto json = run_cli({"report", merged, "--allow-missing-ranks", "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.err.find("warning: " + merged + ": missing ranks 1 of 2; analysing the ranks present"),
            std::string::npos)
      << json.err;
  const auto report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["missing_ranks"], nlohmann::json::array({1}));
  ASSERT_EQ(report["ranks"].size(), 1u);
  EXPECT_EQ(report["functions"][0]["calls"], 1);
  const auto text = run_cli({"report", merged, "--allow-missing-ranks"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("WARNING: missing ranks 1 (rank files never arrived): the tables cover the "
                          "other ranks only"),
            std::string::npos)
      << text.out;
}

// A job without MPI (torchrun) whose nodes each wrote into a folder of their own: rank 0's folder
// and rank 1's, copied to one machine.
std::pair<fs::path, fs::path> make_one_folder_per_node() {
  const auto directory = make_temp_directory("commlens-cli-merge-nodes");
  std::pair<fs::path, fs::path> nodes{directory / "node0", directory / "node1"};
  for (int rank = 0; rank < 2; ++rank) {
    const fs::path& node = rank == 0 ? nodes.first : nodes.second;
    fs::create_directories(node);
    TestDatabase database(node / rank_database_name(rank));
    fill_rank_file(database, rank);
  }
  return nodes;
}

TEST(CliMerge, RankFilesInOneFolderPerNodeMergeIntoOneDatabase) {
  const auto [node0, node1] = make_one_folder_per_node();
  const auto merge = run_cli({"merge", node0.string(), node1.string()});
  ASSERT_EQ(merge.status, 0) << merge.err;
  const auto merged = (node0 / "commlens.sqlite").string();
  EXPECT_NE(merge.err.find("merged 2 of 2 ranks into " + merged), std::string::npos) << merge.err;
  EXPECT_EQ(files_in(node0), std::set<std::string>{"commlens.sqlite"});
  EXPECT_TRUE(files_in(node1).empty());
  const auto report = run_cli({"report", merged, "--format", "json"});
  ASSERT_EQ(report.status, 0) << report.err;
  const auto json = nlohmann::json::parse(report.out);
  ASSERT_EQ(json["ranks"].size(), 2u);
  EXPECT_EQ(json["ranks"][1]["mpi_ns"], 2'000'000);
}

TEST(CliMerge, ARankWithAFileInTwoFoldersIsBadInputNamingBoth) {
  const auto [node0, node1] = make_one_folder_per_node();
  fs::copy_file(node0 / rank_database_name(0), node1 / rank_database_name(0));
  const auto result = run_cli({"merge", node0.string(), node1.string()});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("rank 0 has a file in two folders"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find((node1 / rank_database_name(0)).string()), std::string::npos) << result.err;
}

TEST(CliMerge, MissingDirectoryIsBadInputNamingTheDirectory) {
  const auto directory = (make_temp_directory("commlens-cli-merge") / "absent").string();
  const auto result = run_cli({"merge", directory});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("commlens: merge failed: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(directory), std::string::npos) << result.err;
}

TEST(CliRunMerge, RankFilesWithoutAMergedDatabaseAreMergedAndSummarized) {
  const auto rank_files = make_two_rank_files();
  const auto output = make_temp_directory("commlens-cli-run-merge") / "out";
  // The "job" leaves rank files only, as a job killed before MPI_Finalize's merge does.
  const auto result =
      run_cli({"run", "--output", output.string(), "--", "/bin/sh", "-c",
               "cp " + shell_quote(rank_files.string()) + "/rank-*.sqlite \"$COMMLENS_OUTPUT\"/"},
              "COMMLENS_LIBRARY=" + shell_quote(COMMLENS_TEST_PRELOAD_PATH));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(files_in(output), std::set<std::string>{"commlens.sqlite"})
      << "the merged rank files are removed";
  EXPECT_NE(result.err.find("merged 2 of 2 ranks"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("MPI_Allreduce"), std::string::npos) << result.err;
}

} // namespace
} // namespace commlens::test
