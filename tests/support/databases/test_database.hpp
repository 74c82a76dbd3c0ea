#pragma once
// Builds small commlens databases for tests: the real schema DDL plus rows a test chooses, so the
// expected report numbers can be worked out by hand.
#include <filesystem>
#include <string>
#include <string_view>

struct sqlite3;

namespace commlens::test {

// A fresh directory under the system temp directory, removed by nobody: tests leave evidence.
std::filesystem::path make_temp_directory(std::string_view prefix);

class TestDatabase {
public:
  // Creates `path` with schema v1, application_id and user_version set as commlens writes them.
  explicit TestDatabase(std::filesystem::path path);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  void execute(std::string_view sql);
  const std::filesystem::path& path() const { return path_; }
  // Closes the connection so the file can be copied or damaged byte by byte.
  void close();

private:
  std::filesystem::path path_;
  sqlite3* handle_ = nullptr;
};

// The three-rank run used across the report tests; its numbers are spelled out in the .cpp.
void fill_three_rank_run(TestDatabase& database);

// One rank's file of a two-rank run, as the collector leaves it before merging: rank r made r + 1
// MPI_Allreduce calls of 8 bytes taking 1 ms each.
void fill_rank_file(TestDatabase& database, int rank);

} // namespace commlens::test
