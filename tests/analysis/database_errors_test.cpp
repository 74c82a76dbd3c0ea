// Each way a database can be unusable gives its own one-line message naming the file, from the
// library (DatabaseError) and through the CLI (exit status 2).
#include "cli_runner.hpp"
#include "commlens/analysis/database.hpp"
#include "commlens/analysis/errors.hpp"
#include "test_database.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace commlens::analysis {
namespace {

namespace fs = std::filesystem;

class BadDatabase : public ::testing::Test {
protected:
  void SetUp() override { directory_ = test::make_temp_directory("commlens-bad"); }

  fs::path write_file(const std::string& name, const std::string& content) {
    const auto path = directory_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  fs::path real_database(const std::string& name) {
    const auto path = directory_ / name;
    test::TestDatabase database(path);
    test::fill_three_rank_run(database);
    return path;
  }

  // The problem the library reports, after checking the message names the file.
  static std::string open_problem(const fs::path& path) {
    try {
      Database database(path);
    } catch (const DatabaseError& error) {
      EXPECT_EQ(error.path(), path);
      EXPECT_EQ(std::string(error.what()), path.string() + ": " + error.problem());
      return error.problem();
    }
    ADD_FAILURE() << path << " opened without error";
    return {};
  }

  // The same through the CLI: status 2 and exactly one line on stderr naming file and problem.
  static void expect_cli_rejects(const fs::path& path, const std::string& problem_start) {
    const auto result = test::run_cli({"report", path.string()});
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("commlens: error: " + path.string() + ": " + problem_start, 0), 0u)
        << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }

  fs::path directory_;
};

TEST_F(BadDatabase, MissingFileIsReportedAsSuch) {
  const auto path = directory_ / "absent.sqlite";
  EXPECT_EQ(open_problem(path), "no such file");
  expect_cli_rejects(path, "no such file");
}

TEST_F(BadDatabase, GarbageFileIsNotASqliteDatabase) {
  const auto path = write_file("garbage.sqlite", std::string(4096, 'x'));
  EXPECT_EQ(open_problem(path), "not a SQLite database (bad file header)");
  expect_cli_rejects(path, "not a SQLite database");
}

TEST_F(BadDatabase, EmptyFileIsNotASqliteDatabase) {
  const auto path = write_file("empty.sqlite", "");
  EXPECT_EQ(open_problem(path), "empty file, not a SQLite database");
  expect_cli_rejects(path, "empty file");
}

TEST_F(BadDatabase, TruncatedCopyOfARealDatabaseIsTruncated) {
  const auto original = real_database("original.sqlite");
  const auto content = test::read_file(original.string());
  ASSERT_GT(content.size(), 3 * 4096u);
  const auto path = write_file("truncated.sqlite", content.substr(0, 3 * 4096));
  EXPECT_EQ(open_problem(path).rfind("truncated: 12288 bytes on disk", 0), 0u);
  expect_cli_rejects(path, "truncated: 12288 bytes on disk");
}

TEST_F(BadDatabase, FileCutInsideTheHeaderIsTruncated) {
  const auto content = test::read_file(real_database("original.sqlite").string());
  const auto path = write_file("stub.sqlite", content.substr(0, 50));
  EXPECT_EQ(open_problem(path), "truncated: 50 bytes, shorter than a SQLite header");
}

TEST_F(BadDatabase, DamagedSchemaPageIsCorrupt) {
  auto content = test::read_file(real_database("original.sqlite").string());
  for (std::size_t i = 100; i < 4096; ++i) // page 1 after the file header: the schema table
    content[i] = static_cast<char>(0xA5);
  const auto path = write_file("corrupt.sqlite", content);
  EXPECT_EQ(open_problem(path).rfind("corrupt database (", 0), 0u);
  expect_cli_rejects(path, "corrupt database (");
}

TEST_F(BadDatabase, ForeignSqliteDatabaseIsNotACommlensDatabase) {
  const auto path = real_database("foreign.sqlite");
  {
    test::TestDatabase database(path);
    database.execute("PRAGMA application_id = 42");
  }
  EXPECT_EQ(open_problem(path), "not a commlens database (application_id 0x0000002a, expected 0x436c4e53)");
  expect_cli_rejects(path, "not a commlens database");
}

TEST_F(BadDatabase, NewerSchemaVersionAsksForANewerCommlens) {
  const auto path = real_database("future.sqlite");
  {
    test::TestDatabase database(path);
    database.execute("PRAGMA user_version = 99");
  }
  EXPECT_EQ(open_problem(path), "schema version 99 is newer than this commlens supports (1); read it with a "
                                "newer commlens");
  expect_cli_rejects(path, "schema version 99 is newer");
}

TEST_F(BadDatabase, UnversionedDatabaseWasNeverCompletelyWritten) {
  const auto path = real_database("unversioned.sqlite");
  {
    test::TestDatabase database(path);
    database.execute("PRAGMA user_version = 0");
  }
  EXPECT_EQ(open_problem(path).rfind("no commlens schema version", 0), 0u);
}

TEST_F(BadDatabase, MissingTableIsAnIncompleteDatabase) {
  const auto path = real_database("incomplete.sqlite");
  {
    test::TestDatabase database(path);
    database.execute("DROP TABLE call_stats");
  }
  EXPECT_EQ(open_problem(path), "incomplete commlens database: table 'call_stats' is missing");
}

TEST_F(BadDatabase, ADirectoryIsNotADatabase) {
  EXPECT_EQ(open_problem(directory_), "is a directory, not a database file");
}

TEST_F(BadDatabase, AValidDatabaseOpensWithItsSchemaVersion) {
  const Database database(real_database("good.sqlite"));
  EXPECT_EQ(database.schema_version(), 1);
}

} // namespace
} // namespace commlens::analysis
