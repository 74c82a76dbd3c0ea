// error_returns: sends to a rank that does not exist and allreduces with MPI_OP_NULL, under
// MPI_ERRORS_RETURN. A wrapper once filled in bytes, datatype and location only for calls that
// returned MPI_SUCCESS, so these rows had 0 bytes and no datatype; they must show what the program
// passed. Expected values mirror the pattern documented in examples/error_returns.c.
#include "harness/job.hpp"

#include "harness/database.hpp"

#include <gtest/gtest.h>

namespace commlens::integration {
namespace {

constexpr int kCalls = 5, kRanksHere = 2;

class ErrorReturns : public ::testing::TestWithParam<std::string> {};

std::int64_t scalar_for(const Database& db, const std::string& function, const std::string& expression) {
  return db.scalar("SELECT " + expression + " FROM mpi_calls c JOIN functions f ON f.id = c.function_id " +
                   "LEFT JOIN datatypes d ON d.id = c.datatype WHERE f.name = '" + function + "'");
}

TEST_P(ErrorReturns, FailedCallsKeepTheBytesDatatypeAndCommunicatorTheyWereMadeWith) {
  const JobResult job =
      run_profiled_job({.command = {example_program("error_returns"), std::to_string(kCalls)},
                        .mode = GetParam(),
                        .ranks = kRanksHere});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  ASSERT_NE(job.standard_output.find("error_returns: 5 failed sends, 5 failed allreduces"), std::string::npos)
      << job.describe();
  Database db(job.merged_database());
  const std::string per_rank = "SELECT COALESCE(sum(s.count), 0), COALESCE(sum(s.bytes_sent), 0), "
                               "COALESCE(sum(s.bytes_recv), 0) FROM call_stats s JOIN functions f ON "
                               "f.id = s.function_id WHERE s.comm_id = 0 AND f.name = ";
  for (int rank = 0; rank < kRanksHere; ++rank) {
    const auto sends = db.query(per_rank + "'MPI_Send' AND s.rank = " + std::to_string(rank));
    EXPECT_EQ(sends[0][0].as_int(), kCalls) << "rank " << rank;
    EXPECT_EQ(sends[0][1].as_int(), kCalls * 64) << "rank " << rank;
    const auto allreduces = db.query(per_rank + "'MPI_Allreduce' AND s.rank = " + std::to_string(rank));
    EXPECT_EQ(allreduces[0][0].as_int(), kCalls) << "rank " << rank;
    EXPECT_EQ(allreduces[0][1].as_int(), kCalls * 64) << "rank " << rank;
    EXPECT_EQ(allreduces[0][2].as_int(), kCalls * 64) << "rank " << rank;
  }
  if (GetParam() == "trace") {
    EXPECT_EQ(scalar_for(db, "MPI_Send", "sum(d.name = 'MPI_INT' AND c.buffer_location = 1)"),
              kRanksHere * kCalls);
    EXPECT_EQ(scalar_for(db, "MPI_Allreduce", "sum(d.name = 'MPI_DOUBLE' AND c.buffer_location = 1)"),
              kRanksHere * kCalls);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ErrorReturns, ::testing::Values(std::string("summary"), std::string("trace")),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace commlens::integration
