// MPI_Bcast and MPI_Reduce on device buffers under the GPU collective runtime, against real Open
// MPI: tests/runtime/programs/tree_collectives_check verifies every result itself (every type and
// op, every root, in place, odd counts to 2^22 + 3, sub-communicators, reused and reallocated
// buffers); these tests add what the trace must say: one runtime_ops row per call, tree rows that
// name their tree, segment size and window (and streams, when several), the calls the runtime must
// hand to the baseline with their reasons, and in ab mode both halves. Without a GPU they skip,
// naming what was skipped.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

namespace commlens::integration {
namespace {

// "rank R: calls C failures 0" lines -> C per rank.
std::map<int, std::int64_t> calls_per_rank(const std::string& output) {
  std::map<int, std::int64_t> calls;
  const std::regex line(R"(rank (\d+): calls (\d+) failures 0)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    calls[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  }
  return calls;
}

std::int64_t rows(const Database& db, int rank, const std::string& condition) {
  return db.scalar(
      "SELECT count(*) FROM runtime_ops r JOIN functions f ON f.id = r.function_id WHERE f.name IN "
      "('MPI_Bcast', 'MPI_Reduce') AND r.rank = " +
      std::to_string(rank) + " AND " + condition);
}

// How a check runs beside its mode and rank count.
struct CheckOptions {
  std::string progress = "event"; // COMMLENS_RUNTIME_TREE_PROGRESS
  std::string select = "static";  // COMMLENS_RUNTIME_SELECT
  bool push = false; // a tuning table whose bcast rule has the parents write their children's buffers
  int streams = 0;   // COMMLENS_RUNTIME_TREE_STREAMS (0: unset, the table's one stream)
};

void run_check(const std::string& mode, int ranks, const CheckOptions& options = {}) {
  const auto& [progress, select, push, streams] = options;
  const std::string skip = cuda_tests::why_gpu_check_cannot_run(
      COMMLENS_CHECK_PROGRAM, 1, "the runtime bcast/reduce check with " + std::to_string(ranks) + " ranks");
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  std::map<std::string, std::string> environment{{"COMMLENS_RUNTIME", mode},
                                                 {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,bcast,reduce"},
                                                 {"COMMLENS_RUNTIME_TREE_PROGRESS", progress},
                                                 {"COMMLENS_RUNTIME_SELECT", select}};
  if (streams > 0) {
    environment["COMMLENS_RUNTIME_TREE_STREAMS"] = std::to_string(streams);
  }
  const std::filesystem::path table =
      std::filesystem::temp_directory_path() / ("commlens-push-" + std::to_string(::getpid()) + ".json");
  if (push) { // small segments, so that most calls are pipelines of several
    std::ofstream(table) << R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "trees": [)"
                         << R"({"collective": "bcast", "push": true, "segment_bytes": 4096, "window": 3}]})";
    environment["COMMLENS_RUNTIME_TUNING"] = table.string();
  }
  const JobResult job = run_profiled_job({.command = {COMMLENS_CHECK_PROGRAM, "2"},
                                          .mode = "trace",
                                          .environment = environment,
                                          .timeout_seconds = 900,
                                          .ranks = ranks});
  std::filesystem::remove(table);
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("tree_collectives_check: ok"), std::string::npos) << job.describe();
  const auto calls = calls_per_rank(job.standard_output);
  ASSERT_EQ(static_cast<int>(calls.size()), ranks) << job.describe();
  const Database db(job.merged_database());
  const std::string tree_prefix = progress == "blocking" ? "blocking_tree:" : "tree:";
  for (const auto& [rank, made] : calls) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(rows(db, rank, "1"), made); // one row per call
    const std::int64_t ran = rows(db, rank, "decision = 'runtime'");
    EXPECT_GT(ran, 0);
    EXPECT_EQ(rows(db, rank,
                   "decision = 'runtime' AND algorithm LIKE '" + tree_prefix +
                       "gpu=%segment=%window=%' "
                       "AND chunks > 0 AND decision_source IS NOT NULL"),
              ran);
    // The stored call says what ran, as its row does.
    EXPECT_EQ(db.scalar("SELECT count(*) FROM runtime_ops r JOIN mpi_calls c ON c.id = r.mpi_call_id "
                        "JOIN implementations i ON i.id = c.implementation WHERE r.rank = " +
                        std::to_string(rank) + " AND r.decision = 'runtime' AND i.name = 'runtime:tree'"),
              ran);
    // The baseline's calls: host buffers (the seed, one checked, and the failure count, whose
    // signature may meet the baseline's turn in ab mode first), a vector datatype, a user-defined
    // op, MPI_MINLOC on MPI_2INT; each says why.
    EXPECT_GE(rows(db, rank, "decision = 'fallback' AND reason LIKE '%host buffer%'"), mode == "ab" ? 2 : 3);
    EXPECT_EQ(rows(db, rank, "decision = 'fallback' AND reason LIKE '%non-contiguous%'"), 1);
    EXPECT_EQ(rows(db, rank, "decision = 'fallback' AND reason IS NULL"), 0);
    if (push) { // every bcast the runtime ran pushed, every reduce pulled
      EXPECT_GT(rows(db, rank, "decision = 'runtime' AND algorithm LIKE '%:push'"), 0);
      EXPECT_EQ(
          db.scalar("SELECT count(*) FROM runtime_ops r JOIN functions f ON f.id = r.function_id "
                    "WHERE r.rank = " +
                    std::to_string(rank) +
                    " AND r.decision = 'runtime' AND (f.name = 'MPI_Bcast') <> (r.algorithm LIKE '%:push')"),
          0);
    }
    if (select == "dynamic") {
      // Every tree call the runtime ran was the learner's, and it tried more than one setting.
      EXPECT_EQ(rows(db, rank, "decision = 'runtime' AND decision_source LIKE 'dynamic %'"), ran);
      EXPECT_GT(db.scalar("SELECT count(DISTINCT algorithm) FROM runtime_ops WHERE rank = " +
                          std::to_string(rank) + " AND decision = 'runtime' AND algorithm LIKE 'tree:%'"),
                1);
    }
    if (streams > 1) {
      // Every tree names the streams it was set to; a rank ran its segments on at most that many,
      // and on all of them where it had work of its own over enough segments (every rank is a
      // bcast's non-root and the check's messages reach 16 segments).
      const std::string name = ":streams=" + std::to_string(streams);
      EXPECT_EQ(rows(db, rank, "decision = 'runtime' AND algorithm LIKE '%" + name + "%'"), ran);
      EXPECT_EQ(rows(db, rank,
                     "decision = 'runtime' AND (streams < 1 OR streams > " + std::to_string(streams) + ")"),
                0);
      EXPECT_GT(rows(db, rank, "decision = 'runtime' AND streams = " + std::to_string(streams)), 0);
    } else {
      // The table decides: a tree without `:streams=N` in its name ran on one stream, one with it
      // on at most N (the shipped tables set 2 or 4 streams for some sizes).
      EXPECT_EQ(
          rows(db, rank,
               "decision = 'runtime' AND CASE WHEN algorithm LIKE '%:streams=%' "
               "THEN streams < 1 OR streams > CAST(substr(algorithm, instr(algorithm, ':streams=') + 9) "
               "AS INTEGER) ELSE streams <> 1 END"),
          0);
    }
    if (mode == "ab") {
      EXPECT_GT(rows(db, rank, "decision = 'ab_baseline'"), 0);
    } else {
      EXPECT_EQ(rows(db, rank, "decision = 'ab_baseline'"), 0);
    }
  }
}

TEST(RuntimeTrees, TwoRanksOn) {
  run_check("on", 2);
}
TEST(RuntimeTrees, FourRanksOn) {
  run_check("on", 4);
}
TEST(RuntimeTrees, EightRanksOn) {
  run_check("on", 8);
}
TEST(RuntimeTrees, TwoRanksAb) {
  run_check("ab", 2);
}
TEST(RuntimeTrees, FourRanksAb) {
  run_check("ab", 4);
}
TEST(RuntimeTrees, EightRanksAb) {
  run_check("ab", 8);
}
TEST(RuntimeTrees, FourRanksBlockingTrees) {
  run_check("on", 4, {.progress = "blocking"});
}
TEST(RuntimeTrees, FourRanksDynamicSelection) {
  run_check("on", 4, {.select = "dynamic"});
}
TEST(RuntimeTrees, FourRanksPushedBcast) {
  run_check("on", 4, {.push = true});
}
TEST(RuntimeTrees, EightRanksPushedBcastAb) {
  run_check("ab", 8, {.push = true});
}
TEST(RuntimeTrees, FourRanksPushedBlockingBcast) {
  run_check("on", 4, {.progress = "blocking", .push = true});
}
// Segments round robin over three streams per rank (ctest runtime.trees_streams).
TEST(RuntimeTreeStreams, TwoRanksThreeStreams) {
  run_check("on", 2, {.streams = 3});
}
TEST(RuntimeTreeStreams, FourRanksThreeStreams) {
  run_check("on", 4, {.streams = 3});
}
TEST(RuntimeTreeStreams, FourRanksAbThreeStreams) {
  run_check("ab", 4, {.streams = 3});
}
TEST(RuntimeTreeStreams, FourRanksPushedOnTwoStreams) {
  run_check("on", 4, {.push = true, .streams = 2});
}

} // namespace
} // namespace commlens::integration
