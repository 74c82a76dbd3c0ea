// Bad configuration never stops the application: an unwritable COMMLENS_OUTPUT gives one clear
// "commlens:" error per process and no database; a bad COMMLENS_MODE gives one message naming the
// variable and its accepted values, and profiling goes on in summary mode; so do bad settings of the
// GPU runtime.
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 5;
constexpr std::int64_t kPairBytes = 100 * 4; // ring_pingpong's MPI_Sendrecv

std::vector<std::string> lines_containing(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos)
      found.push_back(line);
  return found;
}

std::vector<std::filesystem::path> databases_under(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::exists(root))
    return found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
    if (entry.path().string().find(".sqlite") != std::string::npos)
      found.push_back(entry.path());
  return found;
}

std::vector<std::string> ring_pingpong() {
  return {example_program("ring_pingpong"), std::to_string(kIterations)};
}

TEST(UnwritableOutput, RunsTheProgramToCompletionWithOneClearErrorAndNoDatabase) {
  // A path below a regular file can never be created.
  const auto blocker_dir =
      std::filesystem::temp_directory_path() / ("commlens-blocker-" + std::to_string(getpid()));
  std::filesystem::create_directories(blocker_dir);
  const auto blocker = blocker_dir / "a-regular-file";
  std::ofstream(blocker) << "not a directory\n";
  const auto result =
      run_profiled_job({.command = ring_pingpong(), .mode = "summary", .output = blocker / "out"});

  EXPECT_EQ(result.exit_code, 0) << result.describe();
  EXPECT_NE(result.standard_output.find("ring_pingpong: 5 iterations"), std::string::npos)
      << result.describe();
  const auto errors = lines_containing(result.standard_error, "commlens:");
  EXPECT_GE(errors.size(), 1u) << result.describe();
  EXPECT_LE(errors.size(), static_cast<std::size_t>(kRanks)) << "at most one error per process\n"
                                                             << result.describe();
  for (const auto& line : errors)
    EXPECT_TRUE(line.find(blocker.string()) != std::string::npos ||
                line.find("COMMLENS_OUTPUT") != std::string::npos)
        << "the error names the directory or the variable: " << line;
  EXPECT_EQ(databases_under(result.work_directory).size() + databases_under(blocker_dir).size(), 0u)
      << result.describe();
  std::filesystem::remove_all(blocker_dir);
}

TEST(CollectorSelection, WithoutThePmpiCollectorTheProgramRunsUnprofiledAndWritesNoDatabase) {
  const auto result =
      run_profiled_job({.command = ring_pingpong(), .environment = {{"COMMLENS_COLLECTORS", "mpit"}}});
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  EXPECT_NE(result.standard_output.find("ring_pingpong: 5 iterations"), std::string::npos)
      << result.describe();
  EXPECT_EQ(databases_under(result.work_directory).size(), 0u) << result.describe();
}

const JobResult& bad_mode_run() {
  static const JobResult result = run_profiled_job({.command = ring_pingpong(), .mode = "bogus"});
  return result;
}

TEST(BadMode, PrintsOneMessageNamingTheVariableAndItsAcceptedValues) {
  const auto& result = bad_mode_run();
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  const auto messages = lines_containing(result.standard_error, "COMMLENS_MODE");
  EXPECT_GE(messages.size(), 1u) << result.describe();
  EXPECT_LE(messages.size(), static_cast<std::size_t>(kRanks)) << "at most one message per process\n"
                                                               << result.describe();
  for (const auto& line : messages) {
    EXPECT_NE(line.find("summary"), std::string::npos) << line;
    EXPECT_NE(line.find("trace"), std::string::npos) << line;
  }
}

TEST(BadMode, ContinuesProfilingInSummaryMode) {
  const auto& result = bad_mode_run();
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  Database db(result.merged_database());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls"), 0) << "summary mode stores no mpi_calls";
  const auto stored = read_call_stats(db, {"MPI_Sendrecv"});
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(stored.totals(r, "MPI_Sendrecv"),
              (CallTotals{kIterations, kIterations * kPairBytes, kIterations * kPairBytes}))
        << "rank " << r;
}

// The GPU runtime's settings are read by the CUDA plugin's loader (contract/runtime_settings.hpp),
// not by the profiler's Config, from the same values: the environment's and the COMMLENS_CONFIG
// file's. A bad one is reported as the profiler's are, once, by rank 0, and profiling goes on.
TEST(BadRuntimeSettings, RankZeroSaysEachOnceAlsoFromTheConfigFile) {
  const auto config_file = std::filesystem::temp_directory_path() /
                           ("commlens-runtime-settings-" + std::to_string(getpid()) + ".conf");
  std::ofstream(config_file) << "COMMLENS_RUNTIME_TREE_STREAMS=9\n";
  const auto result = run_profiled_job({.command = ring_pingpong(),
                                        .environment = {{"COMMLENS_RUNTIME", "yes"},
                                                        {"COMMLENS_RUNTIME_SELECT", "learned"},
                                                        {"COMMLENS_CONFIG", config_file.string()}}});
  std::filesystem::remove(config_file);
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  const std::string select =
      "commlens: COMMLENS_RUNTIME_SELECT=learned is not valid (accepted: static, dynamic, "
      "sweep); using static";
  const std::string streams =
      "commlens: COMMLENS_RUNTIME_TREE_STREAMS=9 is not valid (accepted: an integer from 1 "
      "to 8); using the tuning table's streams";
  for (const std::string& expected :
       {std::string("commlens: COMMLENS_RUNTIME=yes is not valid (accepted: off, on, ab); using off"), select,
        streams}) {
    EXPECT_EQ(lines_containing(result.standard_error, expected).size(), 1u) << expected << "\n"
                                                                            << result.describe();
  }
  Database db(result.merged_database());
  EXPECT_EQ(read_call_stats(db, {"MPI_Sendrecv"}).totals(0, "MPI_Sendrecv").count, kIterations)
      << "profiling went on";
}

} // namespace
} // namespace commlens::integration
