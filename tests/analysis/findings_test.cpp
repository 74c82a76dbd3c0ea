// The findings rules on hand-made databases whose numbers are worked out here: wait states from
// crafted traces (waits through MPI_Waitall, wildcard tags left out, rooted collectives), GPU copy
// paths, the GPU runtime against its baseline, exposed communication in steps and MPI_T queues.
// The example programs in tests/integration/finding_patterns_test.cpp show the same rules on real
// jobs; these cover what a CPU machine cannot run and the edges a real job does not hit reliably.
#include "commlens/analysis/report.hpp"
#include "test_database.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace commlens::test {
namespace {

constexpr std::int64_t kUs = 1'000, kMs = 1'000'000;

std::int64_t call_id(int rank, int sequence) {
  return std::int64_t{rank} << 46 | sequence;
}

// Two ranks of one host, 5 ms each from MPI_Init to MPI_Finalize (10 ms of ranks' time), with the
// functions the tests use.
class Findings : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-findings") / "commlens.sqlite";
    database_ = std::make_unique<TestDatabase>(path_);
    database_->execute(R"sql(
INSERT INTO run (key, value) VALUES ('mode', 'trace'), ('world_size', '2');
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, finalized, gpu_uuid) VALUES
  (0, 'node-a', 100, 0, 5000000, 1, 'GPU-0'), (1, 'node-a', 101, 0, 5000000, 1, 'GPU-1');
INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Isend', 'p2p'), (2, 'MPI_Irecv', 'p2p'),
  (3, 'MPI_Waitall', 'completion'), (4, 'MPI_Recv', 'p2p'), (5, 'MPI_Send', 'p2p'), (6, 'MPI_Ssend', 'p2p'),
  (7, 'MPI_Bcast', 'collective'), (8, 'MPI_Reduce', 'collective'), (9, 'MPI_Allreduce', 'collective'),
  (10, 'MPI_Pcontrol', 'other');
INSERT INTO communicators (id, rank, local_rank, size, is_inter, members, name) VALUES
  (0, 0, 0, 2, 0, '0,1', 'MPI_COMM_WORLD'), (0, 1, 1, 2, 0, '0,1', 'MPI_COMM_WORLD');
INSERT INTO phases (rank, phase, start_ns, end_ns) VALUES (0, 0, 0, NULL), (1, 0, 0, NULL);
)sql");
  }

  // A traced call and its call_stats row (so that the report's functions hold it too).
  void call(int rank, int sequence, int function, std::int64_t start, std::int64_t end, int peer = -1,
            std::optional<int> tag = std::nullopt, std::optional<int> root = std::nullopt,
            std::int64_t bytes = 64) {
    database_->execute(fmt::format(
        "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, "
        "peer, "
        "tag, comm_id, root, request_id, phase) VALUES ({}, {}, 0, {}, {}, {}, {}, {}, {}, {}, 0, {}, {}, 0)",
        call_id(rank, sequence), rank, function, start, end, bytes, bytes, peer,
        tag ? std::to_string(*tag) : "NULL", root ? std::to_string(*root) : "NULL", call_id(rank, sequence)));
    database_->execute(
        fmt::format("INSERT INTO call_stats VALUES ({}, {}, 0, 6, {}, 0, 1, {}, {}, {}, {}, {}) "
                    "ON CONFLICT (rank, function_id, comm_id, size_bin, peer, phase) DO UPDATE SET count = "
                    "count + 1, time_total_ns = time_total_ns + {}",
                    rank, function, peer, bytes, bytes, end - start, end - start, end - start, end - start));
  }
  void request(int rank, int posted_by, int completed_by, int function, std::int64_t post,
               std::int64_t complete, int peer) {
    database_->execute(fmt::format("INSERT INTO mpi_requests VALUES ({}, {}, {}, {}, {}, {}, {}, 64, 64, 0)",
                                   rank, call_id(rank, posted_by), function, post, complete,
                                   call_id(rank, completed_by), peer));
  }

  // Steps 1 to 4 of 1 ms (MPI_Pcontrol(2) phases), with `kernels` recorded in step 2 (2 to 3 ms): a
  // compute kernel from 2.0 to 2.5 ms and NCCL's from 2.4 to 2.8 ms on each rank.
  void steps_with_recorded_kernels(bool kernels = true) {
    database_->execute("DELETE FROM phases");
    for (int rank = 0; rank < 2; ++rank) {
      for (int phase = 0; phase <= 4; ++phase)
        database_->execute(fmt::format("INSERT INTO phases VALUES ({}, {}, {}, {}, {})", rank, phase,
                                       phase * kMs, (phase + 1) * kMs, phase == 0 ? "NULL" : "2"));
      if (kernels)
        database_->execute(fmt::format(
            "INSERT INTO kernel_recording VALUES ({0}, {1}, {2});"
            "INSERT INTO cuda_kernels VALUES ({0}, {1}, {3}, 0, 7, 'gemm', NULL, 1), "
            "({0}, {4}, {5}, 0, 8, '_Z28ncclDevKernel_AllReduce_Sum_f32', NULL, 2)",
            rank, 2 * kMs, 3 * kMs, 2 * kMs + 500 * kUs, 2 * kMs + 400 * kUs, 2 * kMs + 800 * kUs));
    }
  }

  // Each rank calls `collective` once in each of steps 1 to 3.
  void steps_call(std::string_view collective) {
    database_->execute(
        fmt::format("INSERT INTO functions (id, name, family) VALUES (11, '{}', 'collective')", collective));
    for (int rank = 0; rank < 2; ++rank)
      for (int phase = 1; phase <= 3; ++phase)
        database_->execute(fmt::format(
            "INSERT INTO call_stats VALUES ({}, 11, 0, 20, -1, {}, 1, 1048576, 1048576, 10000, 10000, 10000)",
            rank, phase));
  }

  // Steps (MPI_Pcontrol(2) phases 1 to 4) of 100 ms on both ranks; in step `slow`, rank 1 spends
  // 50 ms of it in MPI_Allreduce waiting for rank 0.
  void imbalanced_steps(int slow) {
    database_->execute("DELETE FROM phases");
    for (int phase = 0; phase <= 4; ++phase)
      for (int rank = 0; rank < 2; ++rank)
        database_->execute(fmt::format("INSERT INTO phases VALUES ({}, {}, {}, {}, {})", rank, phase,
                                       phase * 100 * kMs, (phase + 1) * 100 * kMs,
                                       phase == 0 ? "NULL" : "2"));
    database_->execute(fmt::format(
        "INSERT INTO call_stats VALUES (1, 9, 0, 16, -1, {0}, 1, 64, 64, {1}, {1}, {1})", slow, 50 * kMs));
  }

  analysis::FindingsSection findings() {
    database_->close();
    return analysis::build_report(analysis::Database(path_)).findings;
  }

  std::filesystem::path path_;
  std::unique_ptr<TestDatabase> database_;
};

std::set<std::string> ids(const analysis::FindingsSection& section) {
  std::set<std::string> out;
  for (const auto& finding : section.findings)
    out.insert(finding.id);
  return out;
}

const analysis::Finding& only(const analysis::FindingsSection& section, const std::string& id) {
  for (const auto& finding : section.findings)
    if (finding.id == id)
      return finding;
  throw std::runtime_error("no finding " + id);
}

// Rank 1 posts two receives and waits for both in one MPI_Waitall from 100 ns to 1.0001 ms; rank 0
// sends the first at 0.4 ms and the second at 0.9 ms. The wait waits once: until the later send.
TEST_F(Findings, AWaitallCompletingTwoLateMessagesWaitsOnceForTheLaterSend) {
  call(1, 1, 2, 0, 10, 0, 1);
  call(1, 2, 2, 10, 20, 0, 2);
  call(1, 3, 3, 100, kMs + 100);
  request(1, 1, 3, 2, 0, kMs, 0);
  request(1, 2, 3, 2, 10, kMs, 0);
  call(0, 1, 1, 400 * kUs, 400 * kUs + 50, 1, 1);
  call(0, 2, 1, 900 * kUs, 900 * kUs + 50, 1, 2);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"late-sender@MPI_COMM_WORLD"});
  const auto& late = only(section, "late-sender@MPI_COMM_WORLD");
  EXPECT_EQ(late.cost_ns, 900 * kUs - 100);
  EXPECT_DOUBLE_EQ(late.cost_share, double(900 * kUs - 100) / double(10 * kMs));
  EXPECT_EQ(late.evidence[0], "rank 1 waited 899.900 us in MPI_Waitall for rank 0's sends (1 call)");
  EXPECT_NE(late.query.find("FROM mpi_requests"), std::string::npos) << late.query;
  // The timeline shows the wait, from the MPI_Waitall's entry to the later send.
  ASSERT_TRUE(late.timeline);
  EXPECT_EQ(late.timeline->start_ns, 100);
  EXPECT_EQ(late.timeline->end_ns, 900 * kUs);
  EXPECT_EQ(late.timeline->ranks, (std::vector<int>{1, 0}));
  EXPECT_EQ(late.timeline->function, "MPI_Waitall");
}

// With MPI_ANY_TAG the trace does not say which message the receive took, so its pairs are left out
// rather than paired wrongly: the tag-1 receive would otherwise meet the first tag-1 send.
TEST_F(Findings, ReceivesFromARankThatAlsoUsedAWildcardTagAreLeftOut) {
  call(1, 1, 4, 0, 2 * kMs, 0, -1);      // MPI_ANY_TAG
  call(1, 2, 4, 2 * kMs, 4 * kMs, 0, 1); // waits 2 ms for the second send
  call(0, 1, 5, 2 * kMs, 2 * kMs + 10, 1, 1);
  call(0, 2, 5, 4 * kMs, 4 * kMs + 10, 1, 1);
  EXPECT_EQ(findings().findings.size(), 0u);
}

TEST_F(Findings, ASynchronousSendEnteredBeforeItsReceiveIsPostedIsALateReceiver) {
  call(0, 1, 6, 0, kMs, 1, 3);
  call(1, 1, 4, 800 * kUs, kMs, 0, 3);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"late-receiver@MPI_COMM_WORLD"});
  EXPECT_EQ(only(section, "late-receiver@MPI_COMM_WORLD").cost_ns, 800 * kUs);
}

// A late root of MPI_Bcast keeps the non-root waiting; the root of MPI_Reduce waits for the last
// non-root; the first rank into MPI_Allreduce waits for the last. Each wait ends with the call.
TEST_F(Findings, RootedAndAllToAllCollectivesWaitForTheRightRank) {
  call(0, 1, 7, kMs, kMs + 100, -1, std::nullopt, 0);         // Bcast root 0, late
  call(1, 1, 7, 0, kMs + 100, -1, std::nullopt, 0);           // waits 1 ms
  call(0, 2, 8, 1200 * kUs, 3300 * kUs, -1, std::nullopt, 0); // Reduce root 0 waits 2 ms
  call(1, 2, 8, 3200 * kUs, 3300 * kUs, -1, std::nullopt, 0);
  call(0, 3, 9, 3400 * kUs, 4500 * kUs); // Allreduce: rank 0 waits 1 ms
  call(1, 3, 9, 4400 * kUs, 4500 * kUs);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"wait-at-collective@MPI_COMM_WORLD"});
  const auto& wait = only(section, "wait-at-collective@MPI_COMM_WORLD");
  EXPECT_EQ(wait.cost_ns, 4 * kMs);
  EXPECT_EQ(wait.evidence[0],
            "rank 1 was the one waited for (last to enter, or the root) in 2 of 3 collectives");
  EXPECT_EQ(wait.evidence[1], "rank 0 waited 2.000 ms in MPI_Reduce for rank 1 (1 call)");
  // The longest wait of the rank pair that waited most: the root of MPI_Reduce, for rank 1.
  ASSERT_TRUE(wait.timeline);
  EXPECT_EQ(wait.timeline->start_ns, 1200 * kUs);
  EXPECT_EQ(wait.timeline->end_ns, 3200 * kUs);
  EXPECT_EQ(wait.timeline->ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(wait.timeline->function, "MPI_Reduce");
}

// The report tests' three-rank run: rank 2 spends a second of phase 0 (0 to 4 s) in MPI_Barrier
// while ranks 0 and 1 work; the timeline shows the phase, the slowest rank first, then the fastest.
TEST(FindingsOfARun, LoadImbalanceInAPhaseShowsThatPhaseWithItsSlowestAndFastestRank) {
  const auto path = make_temp_directory("commlens-findings") / "three-ranks.sqlite";
  {
    TestDatabase database(path);
    fill_three_rank_run(database);
  }
  const auto section = analysis::build_report(analysis::Database(path)).findings;
  const auto& imbalance = only(section, "load-imbalance@phase-0");
  ASSERT_TRUE(imbalance.timeline);
  EXPECT_EQ(imbalance.timeline->start_ns, 0);
  EXPECT_EQ(imbalance.timeline->end_ns, 4'000'000'000);
  EXPECT_EQ(imbalance.timeline->ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(imbalance.timeline->function, "");
}

// 100 copies of 20 us from pageable memory inside MPI calls, on a host where both ranks have a GPU:
// 2 ms of the ranks' 10 ms, at 3.28 GB/s.
TEST_F(Findings, PageableHostStagedCopiesInsideMpiCallsAreTwoFindings) {
  call(0, 1, 5, 0, 4 * kMs, 1, 1);
  for (int copy = 0; copy < 100; ++copy)
    database_->execute(fmt::format(
        "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, "
        "copy_kind, "
        "path, mpi_call_id, correlation_id) VALUES (0, {0}, {1}, 0, 'device', 'pageable', 65536, 7, 'DtoH', "
        "'host_staged', {2}, {3})",
        copy * 30 * kUs, copy * 30 * kUs + 20 * kUs, call_id(0, 1), copy));
  const auto section = findings();
  ASSERT_EQ(ids(section),
            (std::set<std::string>{"host-staged-copies@host_staged", "pageable-staging@host_staged"}));
  const auto& pageable = only(section, "pageable-staging@host_staged");
  EXPECT_EQ(pageable.cost_ns, 2 * kMs);
  EXPECT_EQ(pageable.title, "Copies from or to pageable host memory take 2.000 ms at 3.28 GB/s");
  EXPECT_EQ(only(section, "host-staged-copies@host_staged").cost_ns, 2 * kMs);
}

// The same copies taken from the runtime's calls, where only every 10th was timed on the GPU (20 us
// each; the others keep their calls' 1 us host times): the finding's time is the timed copies'
// bandwidth over all the bytes, as when every copy was timed.
TEST_F(Findings, CopiesTimedOnlyInASampleAreCostedAtTheSamplesBandwidth) {
  call(0, 1, 5, 0, 4 * kMs, 1, 1);
  for (int copy = 0; copy < 100; ++copy) {
    const bool timed = copy % 10 == 0;
    database_->execute(fmt::format(
        "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, "
        "copy_kind, path, mpi_call_id, correlation_id, gpu_timed) VALUES (0, {0}, {1}, 0, 'device', "
        "'pageable', 65536, 7, 'DtoH', 'host_staged', {2}, 0, {3})",
        copy * 30 * kUs, copy * 30 * kUs + (timed ? 20 * kUs : 1 * kUs), call_id(0, 1), timed ? 1 : 0));
  }
  const auto section = findings();
  const auto& pageable = only(section, "pageable-staging@host_staged");
  EXPECT_EQ(pageable.cost_ns, 2 * kMs);
  EXPECT_EQ(pageable.title, "Copies from or to pageable host memory take 2.000 ms at 3.28 GB/s");
}

TEST_F(Findings, HostStagedCopiesBetweenHostsAreNoPeerPathFinding) {
  database_->execute("UPDATE ranks SET host = 'node-b' WHERE rank = 1");
  call(0, 1, 5, 0, 4 * kMs, 1, 1);
  database_->execute(
      "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, "
      "copy_kind, path, mpi_call_id, correlation_id) VALUES (0, 0, 2000000, 0, 'device', 'pinned', "
      "65536, 7, 'DtoH', 'host_staged', 1, 1)");
  EXPECT_EQ(findings().findings.size(), 0u);
}

// An A/B run: 64 KiB allreduces take 1 us on the runtime and 3 us on the baseline (100 calls each),
// 8 B ones 5 us on the runtime and 1 us on the baseline. All 200 calls of each size on the runtime
// would save 400 us and lose 800 us.
TEST_F(Findings, AnAbRunSaysWhatTheRuntimeWouldSaveAndWhereItIsSlower) {
  for (int turn = 0; turn < 200; ++turn) {
    const bool runtime = turn % 2 == 0;
    for (const auto& [bytes, duration] :
         {std::pair{65536, runtime ? 1 * kUs : 3 * kUs}, std::pair{8, runtime ? 5 * kUs : 1 * kUs}})
      database_->execute(fmt::format("INSERT INTO runtime_ops (rank, mpi_call_id, function_id, comm_id, "
                                     "start_ns, end_ns, implementation, "
                                     "algorithm, decision, bytes, bytes_peer, bytes_host, ipc_opens, chunks, "
                                     "streams) VALUES (0, {}, 9, 0, 0, "
                                     "{}, {}, '{}', '{}', {}, 0, 0, 0, 1, 1)",
                                     turn, duration, runtime ? 3 : 1, runtime ? "one_shot" : "host_staged",
                                     runtime ? "runtime" : "ab_baseline", bytes));
  }
  call(0, 1, 9, 0, 10); // the function's call_stats row
  const auto section = findings();
  ASSERT_EQ(ids(section),
            (std::set<std::string>{"runtime-saves@MPI_Allreduce", "runtime-slower@MPI_Allreduce"}));
  const auto& saves = only(section, "runtime-saves@MPI_Allreduce");
  EXPECT_EQ(saves.cost_ns, 400 * kUs);
  EXPECT_EQ(saves.title, "The GPU runtime would save 400.000 us in MPI_Allreduce");
  EXPECT_EQ(saves.evidence[0],
            "[64KiB, 128KiB): runtime 1.000 us a call, baseline 3.000 us (100 + 100 calls)");
  EXPECT_EQ(only(section, "runtime-slower@MPI_Allreduce").cost_ns, 800 * kUs);
}

// Three steps of 1 ms per rank, each with a 300 us MPI_Allreduce nothing overlaps.
TEST_F(Findings, BlockingAllreducesInTrainingStepsAreExposedCommunication) {
  database_->execute("DELETE FROM phases");
  for (int rank = 0; rank < 2; ++rank) {
    for (int phase = 0; phase <= 4; ++phase)
      database_->execute(fmt::format("INSERT INTO phases VALUES ({}, {}, {}, {}, {})", rank, phase,
                                     phase * kMs, (phase + 1) * kMs, phase == 0 ? "NULL" : "2"));
    for (int phase = 1; phase <= 3; ++phase)
      database_->execute(
          fmt::format("INSERT INTO call_stats VALUES ({}, 9, 0, 16, -1, {}, 1, 65536, 65536, {}, {}, "
                      "{})",
                      rank, phase, 300 * kUs, 300 * kUs, 300 * kUs));
  }
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"exposed-communication@steps"});
  const auto& exposed = only(section, "exposed-communication@steps");
  EXPECT_DOUBLE_EQ(exposed.measured, 0.3);
  EXPECT_EQ(exposed.cost_ns, 6 * 300 * kUs); // 6 rank-steps
  EXPECT_EQ(exposed.evidence[0], "MPI_Allreduce blocks 300.000 us per step and rank (1 call)");
  // Every step communicates as long: the timeline shows the first after the warm-up step.
  ASSERT_TRUE(exposed.timeline);
  EXPECT_EQ(exposed.timeline->start_ns, 2 * kMs);
  EXPECT_EQ(exposed.timeline->end_ns, 3 * kMs);
}

// Three steps of 1 ms per rank, each with 10 copies taken from the runtime's calls, and commlens's
// own time per call from profiler_overhead (both ranks' rows pooled).
void steps_with_copies(TestDatabase& database, std::int64_t own_ns_per_call) {
  database.execute("DELETE FROM phases");
  for (int rank = 0; rank < 2; ++rank) {
    for (int phase = 0; phase <= 4; ++phase)
      database.execute(fmt::format("INSERT INTO phases VALUES ({}, {}, {}, {}, {})", rank, phase, phase * kMs,
                                   (phase + 1) * kMs, phase == 0 ? "NULL" : "2"));
    for (int phase = 1; phase <= 3; ++phase)
      database.execute(fmt::format(
          "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, "
          "copy_kind, path, correlation_id, gpu_timed, copies) VALUES ({}, {}, {}, 0, 'device', 'device', "
          "40960, 7, 'DtoD', 'same_device', 0, 0, 10)",
          rank, phase * kMs + 100 * kUs, phase * kMs + 200 * kUs));
  }
  database.execute(fmt::format("INSERT INTO profiler_overhead (rank, component, count, time_ns) VALUES "
                               "(0, 'cuda_runtime_calls', 64, {}), (1, 'cuda_runtime_calls', 32, {})",
                               64 * own_ns_per_call, 32 * own_ns_per_call));
}

// 2 us a call is 20 us a step, 2% of it, over the rule's 1%.
TEST_F(Findings, CommlensOwnTimeOnTheCopyingThreadsOverOnePercentOfTheStepIsAFinding) {
  steps_with_copies(*database_, 2 * kUs);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"profiler-cost@steps"});
  const auto& cost = only(section, "profiler-cost@steps");
  EXPECT_DOUBLE_EQ(cost.measured, 0.02);
  EXPECT_EQ(cost.cost_ns, 6 * 20 * kUs); // 6 rank-steps
  EXPECT_EQ(cost.title, "commlens itself takes 20.000 us of a 1.000 ms step on the threads that copy");
  EXPECT_EQ(cost.evidence[0], "10 copies per step and rank, 2.000 us of commlens's time a CUDA runtime call "
                              "(timed on one call in 16)");
}

// 500 ns a call is 0.5% of the step: no finding.
TEST_F(Findings, CommlensOwnTimeUnderOnePercentOfTheStepIsNoFinding) {
  steps_with_copies(*database_, 500);
  EXPECT_TRUE(ids(findings()).empty());
}

// The same steps with kernels recorded in step 2 (2 to 3 ms): a compute kernel from 2.0 to 2.5 ms
// and NCCL's from 2.4 to 2.8 ms on each rank: the GPU's own figure, 300 us of 400 exposed, wins.
TEST_F(Findings, RecordedKernelsGiveTheExposedCommunicationOnTheGpu) {
  steps_with_recorded_kernels();
  const auto section = findings();
  const auto& exposed = only(section, "exposed-communication@steps");
  EXPECT_DOUBLE_EQ(exposed.measured, 0.3);
  EXPECT_EQ(exposed.evidence[0],
            "on the GPU, steps 2: communication kernels 400.000 us per step, 100.000 us "
            "of it while compute kernels ran (25.0%), 300.000 us alone; compute 500.000 us");
  EXPECT_TRUE(exposed.advice.starts_with("Start each gradient bucket's allreduce")) << exposed.advice;
  // The timeline shows the step whose kernels were recorded.
  ASSERT_TRUE(exposed.timeline);
  EXPECT_EQ(exposed.timeline->start_ns, 2 * kMs);
  EXPECT_EQ(exposed.timeline->end_ns, 3 * kMs);
}

// What to try follows the steps' communication: FSDP's all-gathers, or DDP's allreduces over NCCL.
TEST_F(Findings, ExposedCommunicationInFsdpStepsAdvisesPrefetching) {
  steps_with_recorded_kernels();
  steps_call("nccl:AllGather");
  const auto section = findings();
  const auto& advice = only(section, "exposed-communication@steps").advice;
  EXPECT_TRUE(advice.starts_with("Let FSDP fetch")) << advice;
}

TEST_F(Findings, ExposedCommunicationInDdpStepsAdvisesSmallerLastBuckets) {
  steps_with_recorded_kernels();
  steps_call("nccl:AllReduce");
  const auto section = findings();
  const auto& advice = only(section, "exposed-communication@steps").advice;
  EXPECT_NE(advice.find("bucket_cap_mb"), std::string::npos) << advice;
}

// Without kernel records the host cannot see how much of NCCL's GPU time compute hid, and says so.
TEST_F(Findings, NcclStepsWithoutKernelRecordsSayHowToMeasureTheirExposedCommunication) {
  steps_with_recorded_kernels(false);
  steps_call("nccl:AllReduce");
  const auto section = findings();
  EXPECT_TRUE(section.findings.empty());
  const auto nccl = std::ranges::find_if(section.not_analysed, [](const std::string& line) {
    return line.starts_with("exposed communication of NCCL in the steps: NCCL's kernels run on the GPU, and "
                            "without kernel records");
  });
  ASSERT_NE(nccl, section.not_analysed.end()) << fmt::format("{}", fmt::join(section.not_analysed, "\n"));
  EXPECT_NE(nccl->find("COMMLENS_KERNELS=steps"), std::string::npos);
}

// Phase 1: rank 0 works 100 ms and calls nothing; rank 1 is in the phase 40 ms, 30 of them in MPI (a
// nested range it left early). Rank 1 can have waited at most its 30 ms in MPI, not the 90 ms by
// which rank 0's work exceeds its own.
TEST_F(Findings, ARankLosesNoMoreToImbalanceThanItsTimeInMpi) {
  database_->execute(
      fmt::format("INSERT INTO phases VALUES (0, 1, 0, {}, NULL), (1, 1, 0, {}, NULL)", 100 * kMs, 40 * kMs));
  database_->execute(
      fmt::format("INSERT INTO call_stats VALUES (1, 9, 0, 16, -1, 1, 1, 64, 64, {0}, {0}, {0})", 30 * kMs));
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"load-imbalance@phase-1"});
  const auto& imbalance = only(section, "load-imbalance@phase-1");
  EXPECT_EQ(imbalance.cost_ns, 30 * kMs);
  EXPECT_DOUBLE_EQ(imbalance.measured, 30.0 / 140.0);
}

// Rank 1 waits 50 ms in MPI for rank 0 in the first step (phase 1, the warm-up) or in the second.
TEST_F(Findings, ImbalanceCountsInTheStepsButNotInTheirWarmUp) {
  imbalanced_steps(1);
  EXPECT_EQ(findings().findings.size(), 0u);
}

TEST_F(Findings, ImbalanceInAStepAfterTheWarmUpIsAFinding) {
  imbalanced_steps(2);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"load-imbalance@steps"});
  EXPECT_EQ(only(section, "load-imbalance@steps").cost_ns, 50 * kMs);
}

// Open MPI's per-peer queue lengths, summed per read: 40 + 10 messages queued at 1 ms, until the
// next read at 3 ms.
TEST_F(Findings, AnUnexpectedQueueOfFiftyMessagesIsAFindingWithItsPeakAndPeer) {
  database_->execute(R"sql(
INSERT INTO pvars (id, name, class, datatype, binding, continuous, readonly, verbosity, selected) VALUES
  (3, 'pml_ob1_unexpected_msgq_length', 'size', 'MPI_UNSIGNED', 'communicator', 1, 1, 4, 1);
INSERT INTO pvar_samples (rank, pvar_id, comm_id, time_ns, value, element, trigger) VALUES
  (1, 3, 0, 0, 0, 0, 3), (1, 3, 0, 0, 0, 1, 3),
  (1, 3, 0, 1000000, 40, 0, 0), (1, 3, 0, 1000000, 10, 1, 0),
  (1, 3, 0, 3000000, 0, 0, 0), (1, 3, 0, 3000000, 0, 1, 0);
)sql");
  call(1, 1, 4, 0, 10, 0, 1);
  const auto section = findings();
  ASSERT_EQ(ids(section), std::set<std::string>{"unexpected-queue@MPI_COMM_WORLD"});
  const auto& queue = only(section, "unexpected-queue@MPI_COMM_WORLD");
  EXPECT_EQ(queue.measured, 50.0);
  EXPECT_EQ(queue.cost_ns, 2 * kMs);
  EXPECT_EQ(queue.evidence[0],
            "rank 1 held 50 unexpected messages (pml_ob1_unexpected_msgq_length) at 1.000 ms, "
            "40 of them from its rank 0 in the communicator");
}

TEST_F(Findings, SummaryModeSaysTheWaitStatesNeedTraceMode) {
  database_->execute("UPDATE run SET value = 'summary' WHERE key = 'mode'");
  const auto section = findings();
  ASSERT_FALSE(section.not_analysed.empty());
  EXPECT_EQ(section.not_analysed[0],
            "late sender, late receiver and wait at collective: not recorded in summary "
            "mode (commlens run --mode trace)");
}

} // namespace
} // namespace commlens::test
