// `commlens run` end to end: it preloads the library into the ranks of an mpirun job (here a
// Python program using mpi4py), passes the options, and leaves a merged database whose counts are
// exactly what the program does (examples/mpi4py_exchange.py).
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <vector>

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;

TEST(Launcher, ProfilesAnMpi4pyJobAndPrintsWhereTheDatabaseIs) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const auto directory =
      std::filesystem::temp_directory_path() / ("commlens-launcher-" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  const auto output = directory / "out";
  const std::string command =
      std::string(COMMLENS_TEST_CLI) + " run --mode trace --output " + output.string() + " -- " +
      COMMLENS_TEST_MPIRUN + " -np " + std::to_string(kRanks) + " --oversubscribe " + python_interpreter() +
      " " + mpi4py_example() + " " + std::to_string(kIterations) + " > " +
      (directory / "stdout.txt").string() + " 2> " + (directory / "stderr.txt").string() + " < /dev/null";
  const int status = std::system(command.c_str());
  std::stringstream errors;
  errors << std::ifstream(directory / "stderr.txt").rdbuf();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << errors.str();
  EXPECT_NE(errors.str().find((output / "commlens.sqlite").string()), std::string::npos) << errors.str();

  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(output))
    left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"commlens.sqlite"}) << "rank files and -wal/-shm files removed";

  Database db(output / "commlens.sqlite");
  EXPECT_EQ(db.scalar("SELECT value = 'trace' FROM run WHERE key = 'mode'"), 1);
  EXPECT_EQ(db.scalar("SELECT sum(count) FROM call_stats s JOIN functions f ON f.id = s.function_id "
                      "WHERE f.name = 'MPI_Allreduce'"),
            kRanks * kIterations);
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                      "WHERE f.name = 'MPI_Send'"),
            kRanks * kIterations);
  std::filesystem::remove_all(directory);
}

} // namespace
} // namespace commlens::integration
