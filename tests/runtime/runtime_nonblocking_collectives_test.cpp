// The runtime's nonblocking data-movement collectives and MPI_Ibcast against real Open MPI:
// tests/runtime/programs/nonblocking_collectives_check verifies every result itself (types, ops,
// counts up to 2^22 + 3, uneven reduce-scatter counts with zeros, every root, in place,
// sub-communicators, several outstanding calls completed by each wait and test call, blocking
// calls between them, host buffers the ranks must agree on); these tests add what the trace must
// say: one runtime_ops row per call of each function, which ran on the runtime (MPI_Ibcast on the
// tree) and which the ranks handed to the baseline and why, and in ab mode both halves. Without a
// GPU they skip, naming what was skipped.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>

namespace commlens::integration {
namespace {

constexpr int kRounds = 40;
constexpr const char* kFunctions[] = {"MPI_Iallgather", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter",
                                      "MPI_Ibcast"};

// "rank R: MPI_Iallgather N ... MPI_Ibcast N blocking_calls B failures 0" -> calls per rank and function.
std::map<int, std::map<std::string, std::int64_t>> calls_per_rank(const std::string& output) {
  std::map<int, std::map<std::string, std::int64_t>> calls;
  const std::regex line(R"(rank (\d+):((?: MPI_\w+ \d+)+) blocking_calls \d+ failures 0)");
  const std::regex count(R"((MPI_\w+) (\d+))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    const std::string counts = (*it)[2];
    auto& per_function = calls[std::stoi((*it)[1])];
    for (auto c = std::sregex_iterator(counts.begin(), counts.end(), count); c != std::sregex_iterator();
         ++c) {
      per_function[(*c)[1]] = std::stoll((*c)[2]);
    }
  }
  return calls;
}

std::int64_t rows(const Database& db, const std::string& function, int rank, const std::string& where = "1") {
  return db.scalar("SELECT count(*) FROM runtime_ops o JOIN functions f ON f.id = o.function_id WHERE "
                   "f.name = '" +
                   function + "' AND o.rank = " + std::to_string(rank) + " AND " + where);
}

void run_check(const std::string& mode, int ranks) {
  const std::string skip = cuda_tests::why_gpu_check_cannot_run(
      COMMLENS_CHECK_PROGRAM, 1,
      "the nonblocking data-movement and bcast check with " + std::to_string(ranks) + " ranks");
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_profiled_job(
      {.command = {COMMLENS_CHECK_PROGRAM, std::to_string(kRounds)},
       .mode = "trace",
       .environment =
           {{"COMMLENS_RUNTIME", mode},
            {"COMMLENS_RUNTIME_COLLECTIVES",
             "allgather,reduce_scatter_block,reduce_scatter,bcast,iallgather,ireduce_scatter,ibcast"}},
       .timeout_seconds = 900,
       .ranks = ranks});
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("nonblocking_collectives_check: ok"), std::string::npos)
      << job.describe();
  const auto calls = calls_per_rank(job.standard_output);
  ASSERT_EQ(static_cast<int>(calls.size()), ranks) << job.describe();
  const Database db(job.merged_database());
  for (const auto& [rank, per_function] : calls) {
    std::int64_t host_fallbacks = 0;
    for (const char* function : kFunctions) {
      const std::string where = std::string(function) + " on rank " + std::to_string(rank);
      // One row per call, each saying what ran.
      EXPECT_EQ(rows(db, function, rank), per_function.at(function)) << where;
      EXPECT_EQ(rows(db, function, rank, "o.implementation IS NULL"), 0) << where;
      EXPECT_GT(rows(db, function, rank, "o.decision = 'runtime'"), 0) << where;
      EXPECT_EQ(rows(db, function, rank, "o.decision = 'fallback' AND o.reason = ''"), 0) << where;
      host_fallbacks += rows(db, function, rank, "o.decision = 'fallback' AND o.reason LIKE '%host%'");
      if (mode == "ab") {
        EXPECT_GT(rows(db, function, rank, "o.decision = 'ab_baseline'"), 0) << where;
      }
    }
    // Host buffers on some rank: the ranks agreed on the baseline, and the rows say why.
    EXPECT_GT(host_fallbacks, 0) << "rank " << rank;
    // MPI_Ibcast ran on the tree (the row names its shapes, segment and window).
    EXPECT_EQ(rows(db, "MPI_Ibcast", rank, "o.decision = 'runtime' AND o.algorithm NOT LIKE 'tree:%'"), 0)
        << "rank " << rank;
  }
}

TEST(RuntimeNonblockingCollectives, TwoRanksOn) {
  run_check("on", 2);
}
TEST(RuntimeNonblockingCollectives, FourRanksOn) {
  run_check("on", 4);
}
TEST(RuntimeNonblockingCollectives, EightRanksOn) {
  run_check("on", 8);
}
TEST(RuntimeNonblockingCollectives, TwoRanksAb) {
  run_check("ab", 2);
}
TEST(RuntimeNonblockingCollectives, FourRanksAb) {
  run_check("ab", 4);
}
TEST(RuntimeNonblockingCollectives, EightRanksAb) {
  run_check("ab", 8);
}

} // namespace
} // namespace commlens::integration
