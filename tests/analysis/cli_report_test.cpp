// `commlens report` and the top-level usage, run through the built binary.
#include "cli_runner.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace commlens::test {
namespace {

class CliReport : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = (make_temp_directory("commlens-cli-report") / "commlens.sqlite").string();
    TestDatabase database(path_);
    fill_three_rank_run(database);
  }
  std::string path_;
};

TEST_F(CliReport, JsonReportParsesAndHoldsTheExactNumbers) {
  const auto result = run_cli({"report", path_, "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["schema_version"], 1);
  EXPECT_EQ(report["run"]["mode"], "summary");
  ASSERT_EQ(report["ranks"].size(), 3u);
  EXPECT_EQ(report["ranks"][1]["mpi_ns"], 2'000'002'000);
  EXPECT_EQ(report["mpi_time_across_ranks_ns"]["max_rank"], 2);
  EXPECT_EQ(report["functions"][0]["name"], "MPI_Allreduce");
  EXPECT_EQ(report["functions"][0]["calls"], 30);
  const auto& send = report["functions"][3];
  EXPECT_EQ(send["name"], "MPI_Send");
  EXPECT_EQ(send["bytes_sent"], 14'096);
  EXPECT_EQ(send["size_histogram"][0]["key"], "2^10");
  EXPECT_EQ(send["size_histogram"][0]["label"], "[1KiB, 2KiB)");
  EXPECT_EQ(send["size_histogram"][1]["calls"], 2);
  EXPECT_EQ(report["dropped"]["events"], 5);
  EXPECT_TRUE(report["filter"]["rank"].is_null());
}

TEST_F(CliReport, JsonReportAppliesRankAndPhaseFilters) {
  const auto result = run_cli({"report", path_, "--format", "json", "--rank", "0", "--phase", "1"});
  ASSERT_EQ(result.status, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["filter"]["rank"], 0);
  EXPECT_EQ(report["filter"]["phase"], 1);
  ASSERT_EQ(report["ranks"].size(), 1u);
  EXPECT_EQ(report["ranks"][0]["mpi_ns"], 1'000'001'000);
  ASSERT_EQ(report["functions"].size(), 2u);
  EXPECT_EQ(report["functions"][1]["calls"], 2);
}

TEST_F(CliReport, TextReportShowsRanksFunctionsHistogramsAndDrops) {
  const auto result = run_cli({"report", path_});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("commlens report: " + path_ + " (schema v1; summary mode, 3 ranks"),
            std::string::npos)
      << result.out;
  EXPECT_LT(result.out.find("\nFindings: "), result.out.find("Time in MPI per rank"))
      << "findings come first";
  EXPECT_NE(result.out.find("Time in MPI per rank"), std::string::npos);
  EXPECT_NE(result.out.find("node-b"), std::string::npos);
  EXPECT_NE(result.out.find("max 4.000 s (rank 2), imbalance 71.4%"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("MPI_Allreduce"), std::string::npos);
  EXPECT_NE(result.out.find("[1KiB, 2KiB)"), std::string::npos);
  EXPECT_NE(result.out.find("[4KiB, 8KiB)"), std::string::npos);
  EXPECT_NE(result.out.find("Dropped events: 5 trace events lost"), std::string::npos);
}

TEST_F(CliReport, EveryFormatSaysAtItsTopWhatTheRunLost) {
  const std::string warning =
      "data lost: 5 trace events dropped (threads beyond the thread limit, or calls after the "
      "last flush), 2 calls not counted (summary table full)";
  for (const std::string format : {"text", "markdown", "html"}) {
    const auto result = run_cli({"report", path_, "--format", format});
    ASSERT_EQ(result.status, 0) << result.err;
    const auto at = result.out.find(warning);
    EXPECT_NE(at, std::string::npos) << format << "\n" << result.out;
    EXPECT_LT(at, result.out.find("Time in MPI per rank")) << format << ": the warning comes first";
  }
  const auto json = run_cli({"report", path_, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto report = nlohmann::json::parse(json.out);
  ASSERT_EQ(report["warnings"].size(), 1u);
  EXPECT_EQ(report["warnings"][0].get<std::string>().rfind(warning, 0), 0u) << report["warnings"];
}

TEST(CliReportEmpty, ARunWithZeroEventsIsBadInputNamingTheFile) {
  const auto path = (make_temp_directory("commlens-cli-empty") / "commlens.sqlite").string();
  { TestDatabase database(path); }
  const auto result = run_cli({"report", path});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "commlens: error: " + path + ": no MPI calls recorded (zero events): nothing to analyse\n");
  EXPECT_TRUE(result.out.empty());
}

TEST_F(CliReport, UnknownRankIsBadInput) {
  const auto result = run_cli({"report", path_, "--rank", "9"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err, "commlens: error: " + path_ + ": no rank 9 in this database\n");
}

TEST_F(CliReport, UnknownFormatIsAUsageError) {
  const auto result = run_cli({"report", path_, "--format", "xml"});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("--format"), std::string::npos) << result.err;
}

TEST(CliUsage, MissingSubcommandIsAUsageError) {
  EXPECT_EQ(run_cli({}).status, 2);
}

TEST(CliUsage, ReportWithoutDatabaseIsAUsageError) {
  EXPECT_EQ(run_cli({"report"}).status, 2);
}

TEST(CliUsage, HelpDocumentsTheExitStatusesAndNamesTheViewer) {
  const auto result = run_cli({"--help"});
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.out.find("Exit status: 0 success"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1 `commlens check` found\na regression; 2 bad input or usage"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("commlens-viewer [DATABASE]"), std::string::npos) << result.out;
}

TEST(CliUsage, EachSubcommandsHelpGivesItsOwnOptionsAndExitStatusOnly) {
  const auto report = run_cli({"report", "--help"});
  EXPECT_EQ(report.status, 0);
  EXPECT_NE(report.out.find("--format"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("Exit status:\n  0  the report was printed"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("regression"), std::string::npos) << "check's exit status is check's own";
  EXPECT_EQ(report.out.find("--baseline"), std::string::npos);
  const auto check = run_cli({"check", "--help"});
  EXPECT_NE(check.out.find("  1  a regression"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("commlens-viewer"), std::string::npos) << "the overview is the main help's";
}

TEST(CliUsage, VersionPrintsTheVersion) {
  const auto result = run_cli({"--version"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out.rfind("commlens ", 0), 0u) << result.out;
  EXPECT_NE(result.out.find('.'), std::string::npos) << result.out;
}

TEST(CliUsage, AMistypedSubcommandSuggestsTheNearestOne) {
  const auto result = run_cli({"reprot", "out"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "commlens: 'reprot' is not a commlens subcommand; did you mean 'report'? (commlens --help "
            "lists them)\n");
  EXPECT_NE(run_cli({"chek"}).err.find("did you mean 'check'?"), std::string::npos);
  EXPECT_NE(run_cli({"hist"}).err.find("did you mean 'histogram'?"), std::string::npos);
}

TEST(CliUsage, CompareUsageNamesItsDatabases) {
  const auto result = run_cli({"compare", "--help"});
  EXPECT_NE(result.out.find("compare [OPTIONS] A [B]"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("(1x)"), std::string::npos) << result.out;
}

TEST_F(CliReport, AnOutputDirectoryStandsForTheCommlensSqliteInIt) {
  // path_ is DIR/commlens.sqlite, as `commlens run --output DIR` leaves it.
  const auto directory = std::filesystem::path(path_).parent_path();
  const auto result = run_cli({"report", directory.string(), "--format", "json"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["database"], path_);
}

TEST(CliReportDirectory, ADirectoryWithoutCommlensSqliteIsBadInputNamingIt) {
  const auto directory = make_temp_directory("commlens-cli-directory");
  const auto empty = run_cli({"report", directory.string()});
  EXPECT_EQ(empty.status, 2);
  EXPECT_EQ(empty.err, "commlens: error: " + directory.string() +
                           ": is a directory, not a database file, and holds no commlens.sqlite\n");
  { TestDatabase rank_file(directory / "rank-00000.sqlite"); }
  const auto unmerged = run_cli({"report", directory.string()});
  EXPECT_EQ(unmerged.status, 2);
  EXPECT_NE(unmerged.err.find("holds rank files but no commlens.sqlite (commlens merge " +
                              directory.string() + ")"),
            std::string::npos)
      << unmerged.err;
}

} // namespace
} // namespace commlens::test
