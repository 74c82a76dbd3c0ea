// The GPU collective runtime against real Open MPI: tests/runtime/programs/allreduce_check verifies every
// result itself (every op and type, odd counts, unaligned offsets, in place, reallocated buffers,
// a random stress run); these tests add what the trace must say: which calls the runtime ran
// (exactly the eligible ones), which it handed to the baseline and why, and in ab mode both halves.
// Without a GPU they skip, naming what was skipped; the CPU-only behaviour is tested too.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>

namespace commlens::integration {
namespace {

constexpr int kStressCalls = 300;
// The calls allreduce_check makes that the runtime must hand to the baseline (its fallback_calls).
constexpr int kFallbackCalls = 6;

std::string run_value(const Database& db, const std::string& key) {
  const auto rows = db.query("SELECT value FROM run WHERE key = '" + key + "'");
  return rows.empty() || !rows[0][0].text ? std::string() : *rows[0][0].text;
}

// "rank R: runtime_eligible E fallback 6 failures 0" lines -> E per rank.
std::map<int, std::int64_t> eligible_per_rank(const std::string& output) {
  std::map<int, std::int64_t> eligible;
  const std::regex line(R"(rank (\d+): runtime_eligible (\d+) fallback )" + std::to_string(kFallbackCalls) +
                        " failures 0");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    eligible[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  }
  return eligible;
}

std::int64_t ops_of(const Database& db, int rank, const std::string& decision) {
  return db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) +
                   " AND decision = '" + decision + "'");
}

std::int64_t calls_by(const Database& db, int rank, const std::string& implementation) {
  return db.scalar("SELECT count(*) FROM mpi_calls c JOIN implementations i ON i.id = c.implementation "
                   "JOIN functions f ON f.id = c.function_id WHERE f.name = 'MPI_Allreduce' AND c.rank = " +
                   std::to_string(rank) + " AND i.name LIKE '" + implementation + "'");
}

struct CheckedRun {
  JobResult job;
  std::unique_ptr<Database> db;
  std::map<int, std::int64_t> eligible;
};

// Runs allreduce_check under the runtime; null db when skipped (then *skip says why).
CheckedRun run_check(const std::string& runtime_mode, int ranks, int gpus_needed, std::string* skip,
                     std::map<std::string, std::string> environment = {}) {
  CheckedRun run;
  *skip = cuda_tests::why_gpu_check_cannot_run(COMMLENS_CHECK_PROGRAM, gpus_needed,
                                               "the runtime allreduce check with " + std::to_string(ranks) +
                                                   " ranks");
  if (!skip->empty()) {
    return run;
  }
  environment["COMMLENS_RUNTIME"] = runtime_mode;
  environment["COMMLENS_RUNTIME_HOST_PERCENT"] = "13"; // the host path is off by default; exercise it too
  // The check allocates fresh buffers for most calls: with background opens their small first uses
  // would go to the host path, and the kernels under test would rarely run (that path is tested
  // on its own below). Off is the default; said here so that the test keeps its meaning.
  environment["COMMLENS_RUNTIME_BACKGROUND_OPENS"] = "0";
  run.job = run_profiled_job({.command = {COMMLENS_CHECK_PROGRAM, std::to_string(kStressCalls)},
                              .mode = "trace",
                              .environment = std::move(environment),
                              .timeout_seconds = 500,
                              .ranks = ranks});
  std::cout << run.job.standard_output;
  EXPECT_EQ(run.job.exit_code, 0) << run.job.describe();
  EXPECT_NE(run.job.standard_output.find("allreduce_check: ok"), std::string::npos) << run.job.describe();
  run.eligible = eligible_per_rank(run.job.standard_output);
  EXPECT_EQ(static_cast<int>(run.eligible.size()), ranks) << run.job.describe();
  if (run.job.exit_code == 0) {
    run.db = std::make_unique<Database>(run.job.merged_database());
  }
  return run;
}

// allreduce_check puts rank r on GPU r % (GPUs present).
int gpus_used(int ranks) {
  return std::min(ranks, cuda_tests::gpu_count());
}

// Runs allreduce_check on `ranks` ranks under COMMLENS_RUNTIME=on (skipped with fewer GPUs than
// gpus_needed) and checks the trace: which implementation ran each eligible call, the fallbacks.
void expect_runtime_ran_every_eligible_call(int ranks_asked, int gpus_needed) {
  std::string skip;
  const CheckedRun run = run_check("on", ranks_asked, gpus_needed, &skip);
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  EXPECT_EQ(run_value(db, "runtime"), "on");
  const int ranks = static_cast<int>(run.eligible.size());
  const int gpus = gpus_used(ranks);
  for (const auto& [rank, eligible] : run.eligible) {
    EXPECT_EQ(ops_of(db, rank, "runtime"), eligible) << "rank " << rank;
    EXPECT_EQ(calls_by(db, rank, "runtime:%"), eligible) << "rank " << rank;
    if (gpus == 1) {
      // Every rank on one GPU: the shared-GPU one-shot takes every call, in place too.
      EXPECT_EQ(calls_by(db, rank, "runtime:shared_gpu"), eligible) << "rank " << rank;
    } else if (gpus == ranks) {
      EXPECT_GT(calls_by(db, rank, "runtime:one_shot"), 0) << "rank " << rank; // not in place
      EXPECT_GT(calls_by(db, rank, "runtime:two_shot"), 0) << "rank " << rank; // in place
      EXPECT_EQ(calls_by(db, rank, "runtime:shared_gpu"), 0) << "rank " << rank;
    } else {
      EXPECT_GT(calls_by(db, rank, "runtime:shared_gpu"), 0) << "rank " << rank; // not in place
      EXPECT_GT(calls_by(db, rank, "runtime:two_shot"), 0) << "rank " << rank;   // in place
      EXPECT_EQ(calls_by(db, rank, "runtime:one_shot"), 0) << "rank " << rank;
    }
    // Two ranks on two GPUs stripe the two calls of 256 MiB and more (not in place) over NVLink
    // and host; ranks sharing a GPU never do.
    EXPECT_EQ(calls_by(db, rank, "runtime:one_shot_striped"), ranks == 2 && gpus == 2 ? 2 : 0)
        << "rank " << rank;
    EXPECT_EQ(ops_of(db, rank, "fallback"), kFallbackCalls) << "rank " << rank;
    // Every call the runtime ran has its host phases (runtime_ops.publish_ns ... barrier_ns).
    EXPECT_EQ(
        db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) +
                  " AND decision = 'runtime' AND (publish_ns IS NULL OR map_ns IS NULL OR agree_ns IS NULL OR"
                  " barrier_ns IS NULL)"),
        0)
        << "rank " << rank;
    // Every fallback names its reason; the six calls' reasons are known (host buffers: the
    // host-only call and the host send buffer into a device receive buffer).
    for (const auto& [reason, calls] :
         std::initializer_list<std::pair<const char*, int>>{{"host buffer", 2},
                                                            {"operation not supported", 1},
                                                            {"datatype not supported", 1},
                                                            {"managed", 1},
                                                            {"inter-communicator", 1}}) {
      EXPECT_EQ(db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) +
                          " AND decision = 'fallback' AND reason LIKE '%" + reason + "%'"),
                calls)
          << "rank " << rank << ", reason " << reason;
    }
  }
  EXPECT_FALSE(run_value(db, "runtime_ipc_cache").empty());
  std::cout << "runtime_ipc_cache: " << run_value(db, "runtime_ipc_cache") << "\n";
}

TEST(RuntimeAllreduce, TwoRanksOnTwoGpusRunEveryEligibleCallCorrectly) {
  expect_runtime_ran_every_eligible_call(2, 2);
}

TEST(RuntimeAllreduce, FourRanksSharingGpusRunEveryEligibleCallCorrectly) {
  expect_runtime_ran_every_eligible_call(4, 1);
}

TEST(RuntimeAllreduce, EightRanksSharingGpusRunEveryEligibleCallCorrectly) {
  expect_runtime_ran_every_eligible_call(8, 1);
}

// Ranks on several nodes: node parts reduce into their leader, the leaders allreduce through host
// memory in pipelined chunks, the leaders' results are copied out. COMMLENS_RUNTIME_RANKS_PER_NODE
// makes one machine several nodes.
void expect_hierarchical_run(int ranks, int ranks_per_node) {
  std::string skip;
  const CheckedRun run =
      run_check("on", ranks, 1, &skip, {{"COMMLENS_RUNTIME_RANKS_PER_NODE", std::to_string(ranks_per_node)}});
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  ASSERT_EQ(static_cast<int>(run.eligible.size()), ranks);
  for (const auto& [rank, eligible] : run.eligible) {
    EXPECT_EQ(ops_of(db, rank, "runtime"), eligible) << "rank " << rank;
    EXPECT_EQ(calls_by(db, rank, "runtime:hierarchical"), eligible) << "rank " << rank;
    EXPECT_EQ(ops_of(db, rank, "fallback"), kFallbackCalls) << "rank " << rank;
    // Node leaders move every byte through host memory (off the GPU and back), in chunks.
    const bool leader = rank % ranks_per_node == 0;
    EXPECT_EQ(db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) +
                        " AND decision = 'runtime' AND bytes_host = bytes AND chunks >= 1"),
              leader ? eligible : 0)
        << "rank " << rank;
  }
}

TEST(RuntimeAllreduce, HierarchicalAcrossTwoNodesOfTwoRanksRunsEveryEligibleCallCorrectly) {
  expect_hierarchical_run(4, 2);
}

TEST(RuntimeAllreduce, HierarchicalWithOneRankPerNodeRunsEveryEligibleCallCorrectly) {
  expect_hierarchical_run(3, 1);
}

TEST(RuntimeAllreduce, AbModeSplitsEachSignatureBetweenRuntimeAndBaseline) {
  std::string skip;
  const CheckedRun run = run_check("ab", 2, 1, &skip);
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  EXPECT_EQ(run_value(db, "runtime"), "ab");
  for (const auto& [rank, eligible] : run.eligible) {
    const std::int64_t runtime = ops_of(db, rank, "runtime");
    const std::int64_t baseline = ops_of(db, rank, "ab_baseline");
    // A baseline turn does not look at the buffers, so of the four calls the runtime must decline
    // those whose turn it was went to the baseline as ab_baseline, the rest as fallback.
    EXPECT_EQ(runtime + baseline + ops_of(db, rank, "fallback"), eligible + kFallbackCalls)
        << "rank " << rank;
    EXPECT_GT(runtime, 0);
    EXPECT_GT(baseline, 0);
    EXPECT_EQ(calls_by(db, rank, "runtime:%"), runtime);
    EXPECT_EQ(calls_by(db, rank, "mpi:host_staged"),
              db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) +
                        " AND implementation = 1"));
  }
}

// tests/runtime/programs/first_use_check: per size and round, a first call on fresh buffers and a second
// one after a pause. Small first uses run on the host path while the worker opens the peers' handles, and the
// second call finds them mapped (no open in the call); a large first use opens them itself.
TEST(RuntimeAllreduce, SmallFirstUsesRunOnTheHostPathWhileTheHandlesOpenInTheBackground) {
  constexpr int kRanks = 4;
  if (const std::string skip =
          cuda_tests::why_gpu_check_cannot_run(COMMLENS_FIRST_USE_PROGRAM, 1, "the first-use check");
      !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_profiled_job(
      {.command = {COMMLENS_FIRST_USE_PROGRAM, "64", "65536", "67108864"},
       .mode = "trace",
       .environment = {{"COMMLENS_RUNTIME", "on"}, {"COMMLENS_RUNTIME_BACKGROUND_OPENS", "1"}},
       .timeout_seconds = 300,
       .ranks = kRanks});
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  ASSERT_NE(job.standard_output.find("first_use_check: ok"), std::string::npos) << job.describe();
  const Database db(job.merged_database());
  const auto calls = [&](int rank, std::uint64_t bytes) {
    std::vector<std::string> seen;
    for (const auto& row :
         db.query("SELECT decision, coalesce(reason, ''), ipc_opens FROM runtime_ops WHERE rank = " +
                  std::to_string(rank) + " AND bytes = " + std::to_string(bytes) + " ORDER BY start_ns")) {
      const std::string reason = row[1].text.value_or("");
      seen.push_back(row[0].text.value_or("") +
                     (reason.starts_with("first use of a peer's buffer") ? " first-use" : reason) +
                     (row[2].as_int() > 0 ? " opened" : ""));
    }
    return seen;
  };
  // Two rounds (warm-up, timed) of a first and a second call per size.
  for (int rank = 0; rank < kRanks; ++rank) {
    for (const std::uint64_t small : {64u, 65536u}) {
      EXPECT_EQ(calls(rank, small),
                (std::vector<std::string>{"fallback first-use", "runtime", "fallback first-use", "runtime"}))
          << "rank " << rank << ", " << small << " bytes";
    }
  }
  // Every rank shares GPU 0 when there is one GPU: rank 0 leads it and alone maps peers' buffers.
  if (cuda_tests::gpu_count() == 1) {
    EXPECT_EQ(calls(0, 67108864),
              (std::vector<std::string>{"runtime opened", "runtime", "runtime opened", "runtime"}));
  }
  EXPECT_NE(run_value(db, "runtime_ipc_cache").find("background_opens="), std::string::npos);
  EXPECT_EQ(run_value(db, "runtime_ipc_cache").find("background_opens=0"), std::string::npos)
      << run_value(db, "runtime_ipc_cache");
}

TEST(RuntimeAllreduce, WithoutAGpuTheRuntimeIsOffWithAReasonAndMpiIsProfiledAsUsual) {
  if (cuda_tests::gpu_count() > 0) {
    GTEST_SKIP() << "a GPU is present: skipped the no-GPU run (the GPU tests above cover this machine)";
  }
  const JobResult result = run_profiled_job({.command = {example_program("collectives_tour")},
                                             .mode = "trace",
                                             .environment = {{"COMMLENS_RUNTIME", "on"}}});
  ASSERT_EQ(result.exit_code, 0) << result.describe();
  const Database db(result.merged_database());
  EXPECT_EQ(run_value(db, "runtime"), "off");
  EXPECT_FALSE(run_value(db, "runtime_reason").empty());
  EXPECT_EQ(db.scalar("SELECT count(*) FROM runtime_ops"), 0);
  EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls WHERE implementation <> 0"), 0);
  EXPECT_GT(db.scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                      "WHERE f.name = 'MPI_Allreduce'"),
            0);
}

} // namespace
} // namespace commlens::integration
