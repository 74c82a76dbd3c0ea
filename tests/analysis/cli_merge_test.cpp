// `commlens merge` (and `commlens run` merging what a job left) over rank files built from the
// real schema, read back through `commlens report`.
#include "cli_runner.hpp"
#include "commlens/profiler/merge.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  EXPECT_TRUE(fs::exists(output / "commlens.sqlite"));
  EXPECT_NE(result.err.find("merged 2 of 2 ranks"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("MPI_Allreduce"), std::string::npos) << result.err;
}

} // namespace
} // namespace commlens::test
