// The runtime's nonblocking collectives against real Open MPI: tests/runtime/programs/nonblocking_check
// verifies every result itself (types, ops, counts up to 2^22 + 3, in place, sub-communicators,
// several outstanding calls completed by each wait and test call, blocking calls between them,
// host buffers the ranks must agree on); these tests add what the trace must say: one runtime_ops
// row per MPI_Iallreduce, which ran on the runtime and which the ranks handed to the baseline and
// why, and in ab mode both halves. Without a GPU they skip, naming what was skipped.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <vector>

namespace commlens::integration {
namespace {

constexpr int kRounds = 40;

// "rank R: nonblocking_calls N blocking_calls B failures 0" -> N per rank.
std::map<int, std::int64_t> nonblocking_calls_per_rank(const std::string& output) {
  std::map<int, std::int64_t> calls;
  const std::regex line(R"(rank (\d+): nonblocking_calls (\d+) blocking_calls \d+ failures 0)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    calls[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  }
  return calls;
}

std::int64_t iallreduce_rows(const Database& db, int rank, const std::string& where = "1") {
  return db.scalar("SELECT count(*) FROM runtime_ops o JOIN functions f ON f.id = o.function_id WHERE "
                   "f.name = 'MPI_Iallreduce' AND o.rank = " +
                   std::to_string(rank) + " AND " + where);
}

void run_check(const std::string& mode, int ranks) {
  const std::string skip = cuda_tests::why_gpu_check_cannot_run(COMMLENS_CHECK_PROGRAM, 1,
                                                                "the nonblocking collectives check with " +
                                                                    std::to_string(ranks) + " ranks");
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  // ab mode asserts that some call signature came back for the baseline's turn: a fixed seed makes
  // that certain (a seed from the clock once drew no repeated signature among 2 ranks' calls).
  std::vector<std::string> command{COMMLENS_CHECK_PROGRAM, std::to_string(kRounds)};
  if (mode == "ab") {
    command.push_back(std::to_string(20261126 + ranks));
  }
  const JobResult job = run_profiled_job(
      {.command = command,
       .mode = "trace",
       .environment = {{"COMMLENS_RUNTIME", mode}, {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,iallreduce"}},
       .timeout_seconds = 900,
       .ranks = ranks});
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("nonblocking_check: ok"), std::string::npos) << job.describe();
  const std::map<int, std::int64_t> calls = nonblocking_calls_per_rank(job.standard_output);
  ASSERT_EQ(static_cast<int>(calls.size()), ranks) << job.describe();
  const Database db(job.merged_database());
  for (const auto& [rank, posted] : calls) {
    // One row per call, each saying what ran.
    EXPECT_EQ(iallreduce_rows(db, rank), posted) << "rank " << rank;
    EXPECT_EQ(iallreduce_rows(db, rank, "o.implementation IS NULL"), 0) << "rank " << rank;
    EXPECT_GT(iallreduce_rows(db, rank, "o.decision = 'runtime'"), 0) << "rank " << rank;
    // Host buffers on some rank: the ranks agreed on the baseline, and the row says why.
    EXPECT_GT(iallreduce_rows(db, rank, "o.decision = 'fallback' AND o.reason LIKE '%host%'"), 0)
        << "rank " << rank;
    EXPECT_EQ(iallreduce_rows(db, rank, "o.decision = 'fallback' AND o.reason = ''"), 0) << "rank " << rank;
    if (mode == "ab") {
      EXPECT_GT(iallreduce_rows(db, rank, "o.decision = 'ab_baseline'"), 0) << "rank " << rank;
    }
  }
}

// MPI's progress rule (programs/nonblocking_progress_check.cpp): rank 0's host buffers make every
// rank's job decline, and rank 0 is blocked in MPI_Recv until the last rank's wait for that call
// returned, so only the lanes can finish the calls; a hang fails the test by its timeout. Every
// call's row says the ranks declined and what ran instead.
void run_progress_check(int ranks) {
  const std::string skip = cuda_tests::why_gpu_check_cannot_run(COMMLENS_PROGRESS_PROGRAM, 1,
                                                                "the nonblocking progress check with " +
                                                                    std::to_string(ranks) + " ranks");
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  constexpr int kProgressRounds = 4;
  constexpr std::int64_t kCount = 100003; // floats: an MPI_Ibcast moves 400012 bytes, two 256 KiB chunks
  // Every call a job on a lane: a measured table may send some sizes to `staged`, the host-staged
  // baseline posted at the call, which this check is not about.
  const std::filesystem::path table =
      std::filesystem::temp_directory_path() / ("commlens-direct-" + std::to_string(::getpid()) + ".json");
  std::ofstream(table) << R"({"format": 1, "rules": [{"algorithm": "one_shot"}], )"
                       << R"("data_movement": [{"algorithm": "direct"}]})";
  const JobResult job = run_profiled_job(
      {.command = {COMMLENS_PROGRESS_PROGRAM, std::to_string(kProgressRounds), std::to_string(kCount)},
       .mode = "trace",
       .environment = {{"COMMLENS_RUNTIME", "on"},
                       {"COMMLENS_RUNTIME_COLLECTIVES", "iallreduce,iallgather,ireduce_scatter,ibcast"},
                       {"COMMLENS_RUNTIME_TUNING", table.string()}},
       .timeout_seconds = 120,
       .ranks = ranks});
  std::filesystem::remove(table);
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("nonblocking_progress_check: ok"), std::string::npos) << job.describe();
  const Database db(job.merged_database());
  for (int rank = 0; rank < ranks; ++rank) {
    // Five calls a round, each declined in its job (rank 0's host buffer) and run by the lanes.
    EXPECT_EQ(
        db.scalar("SELECT count(*) FROM runtime_ops o JOIN implementations i ON i.id = o.implementation "
                  "WHERE o.rank = " +
                  std::to_string(rank) +
                  " AND o.decision = 'fallback' AND o.reason LIKE 'rank 0: host buffer%' AND "
                  "i.name = 'runtime:node_shared_memory' AND o.algorithm = 'node_shared_memory'"),
        5 * kProgressRounds)
        << "rank " << rank;
    // Each rank copied the bcast's message through the stages once: the root in, the others out.
    EXPECT_EQ(db.scalar("SELECT count(*) FROM runtime_ops o JOIN functions f ON f.id = o.function_id WHERE "
                        "f.name = 'MPI_Ibcast' AND o.rank = " +
                        std::to_string(rank) +
                        " AND o.chunks = 2 AND o.bytes_host = " + std::to_string(kCount * 4)),
              kProgressRounds)
        << "rank " << rank;
  }
}

TEST(RuntimeNonblocking, DeclinedCallsProgressWithoutTheCallingThreadTwoRanks) {
  run_progress_check(2);
}
TEST(RuntimeNonblocking, DeclinedCallsProgressWithoutTheCallingThreadFourRanks) {
  run_progress_check(4);
}

TEST(RuntimeNonblocking, TwoRanksOn) {
  run_check("on", 2);
}
TEST(RuntimeNonblocking, FourRanksOn) {
  run_check("on", 4);
}
TEST(RuntimeNonblocking, EightRanksOn) {
  run_check("on", 8);
}
TEST(RuntimeNonblocking, TwoRanksAb) {
  run_check("ab", 2);
}
TEST(RuntimeNonblocking, FourRanksAb) {
  run_check("ab", 4);
}
TEST(RuntimeNonblocking, EightRanksAb) {
  run_check("ab", 8);
}

} // namespace
} // namespace commlens::integration
