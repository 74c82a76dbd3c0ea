// The training-steps section and its comparison, on a two-rank database with known steps: phase 0
// set-up, phases 1 to 3 steps of 100, 200 and 300 ms (MPI_Pcontrol(2)), phase 4 the tear-down.
// Each rank and step: two allreduces (1448 B, 10 ms; 18432 B, 20 ms) and the MPI_Pcontrol (1 us);
// rank 1 also one MPI_Bcast (8 B, 1 ms) in step 3.
#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/report_format.hpp"
#include "test_database.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tuple>

namespace commlens::test {
namespace {

constexpr std::int64_t kMs = 1'000'000;

void fill_training_run(TestDatabase& database) {
  database.execute(R"sql(
INSERT INTO run (key, value) VALUES ('mode', 'trace'), ('world_size', '2');
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, finalized) VALUES
  (0, 'node-a', 100, 0, 2000000000, 1), (1, 'node-a', 101, 0, 2000000000, 1);
INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Allreduce', 'collective'),
  (2, 'MPI_Bcast', 'collective'), (3, 'MPI_Pcontrol', 'other'), (4, 'MPI_Allgather', 'collective');
INSERT INTO pvars (id, name, class, datatype, binding, continuous, readonly, verbosity, selected) VALUES
  (7, 'unexpected_queue', 'size', 'MPI_UNSIGNED', 'communicator', 1, 1, 1, 1),
  (8, 'match_attempts', 'counter', 'MPI_UNSIGNED', 'none', 1, 1, 1, 1);
INSERT INTO pvar_samples (rank, pvar_id, comm_id, time_ns, value, element, trigger) VALUES
  (0, 7, 0, 1050000000, 1, 0, 0), (0, 7, 0, 1150000000, 3, 0, 0), (0, 7, 0, 1150000000, 2, 1, 0),
  (0, 7, 0, 1700000000, 40, 0, 0),
  (0, 8, NULL, 1350000000, 10, 0, 0), (0, 8, NULL, 1450000000, 25, 0, 0);
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id) VALUES
  (0, 1010000000, 1011000000, 0, 'device', 'pinned', 1048576, 7, 'DtoH', 'host_staged', 1);
)sql");
  const std::int64_t starts[] = {0, 1000 * kMs, 1100 * kMs, 1300 * kMs, 1600 * kMs, 2000 * kMs};
  std::int64_t call_id = 1;
  for (int rank = 0; rank < 2; ++rank) {
    for (int phase = 0; phase <= 4; ++phase)
      database.execute(fmt::format("INSERT INTO phases VALUES ({}, {}, {}, {}, {})", rank, phase,
                                   starts[phase], starts[phase + 1], phase == 0 ? "NULL" : "2"));
    database.execute(
        fmt::format("INSERT INTO call_stats VALUES ({}, 2, 0, 3, -1, 0, 20, 0, 0, 1000, 10, 100);"
                    "INSERT INTO call_stats VALUES ({}, 4, 0, 3, -1, 4, 1, 8, 16, 1000, 1000, 1000)",
                    rank, rank));
    for (int phase = 1; phase <= 3; ++phase) {
      database.execute(fmt::format(
          "INSERT INTO call_stats VALUES ({0}, 1, 0, 10, -1, {1}, 1, 1448, 1448, {2}, {2}, {2});"
          "INSERT INTO call_stats VALUES ({0}, 1, 0, 14, -1, {1}, 1, 18432, 18432, {3}, {3}, {3});"
          "INSERT INTO call_stats VALUES ({0}, 3, -1, -1, -1, {1}, 1, 0, 0, 1000, 1000, 1000);",
          rank, phase, 10 * kMs, 20 * kMs));
      for (const auto bytes : {1448, 18432})
        database.execute(
            fmt::format("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, "
                        "bytes_sent, bytes_recv, peer, phase) VALUES ({}, {}, 0, 1, {}, {}, {}, {}, "
                        "-1, {})",
                        std::int64_t{rank} << 46 | call_id++, rank, starts[phase] + 1000,
                        starts[phase] + 2000, bytes, bytes, phase));
    }
  }
  database.execute("INSERT INTO call_stats VALUES (1, 2, 0, 3, -1, 3, 1, 0, 8, 1000000, 1000000, 1000000)");
}

class TrainingSteps : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-steps") / "commlens.sqlite";
    TestDatabase database(path_);
    fill_training_run(database);
  }
  analysis::Report report() const { return analysis::build_report(analysis::Database(path_)); }
  std::filesystem::path path_;
};

TEST_F(TrainingSteps, PcontrolLevelTwoPhasesClosedByALaterPhaseAreTheSteps) {
  const auto steps = report().training_steps;
  ASSERT_TRUE(steps.absent.empty()) << steps.absent;
  ASSERT_EQ(steps.steps.size(), 3u);
  EXPECT_EQ(steps.steps.front().phase, 1);
  EXPECT_EQ(steps.steps.back().phase, 3);
  EXPECT_EQ(steps.rank_steps, 6);
  EXPECT_EQ(steps.steps[1].duration_ns, 200 * kMs);
  EXPECT_EQ(steps.steps[2].mpi_ns, (2 * (30 * kMs + 1000) + kMs) / 2);
  EXPECT_EQ(steps.steps[0].allreduce_calls, 4u);
  EXPECT_EQ(steps.steps[0].allreduce_bytes, 2u * (1448 + 18432));
}

TEST_F(TrainingSteps, StepTimeHasMedianQuartilesAndShareInMpi) {
  const auto steps = report().training_steps;
  EXPECT_EQ(steps.median_ns, 200 * kMs);
  EXPECT_EQ(steps.min_ns, 100 * kMs);
  EXPECT_EQ(steps.max_ns, 300 * kMs);
  EXPECT_EQ(steps.p75_ns, 300 * kMs);
  EXPECT_EQ(steps.median_mpi_ns, 30 * kMs + 1000);
  // The first of three steps is the warm-up: the share is over steps 2 and 3.
  EXPECT_EQ(steps.warmup_steps, 1);
  EXPECT_DOUBLE_EQ(steps.mpi_share,
                   double((30 * kMs + 1000) + (30 * kMs + 1000 + kMs / 2)) / double(500 * kMs));
}

TEST_F(TrainingSteps, CallsPerStepAreMeansOverRankStepsWithTheirRange) {
  const auto steps = report().training_steps;
  ASSERT_EQ(steps.functions.size(), 2u); // MPI_Pcontrol, the step marker, is left out
  EXPECT_EQ(steps.functions[0].name, "MPI_Allreduce");
  EXPECT_EQ(steps.functions[0].calls_per_step, 2.0);
  EXPECT_EQ(steps.functions[0].bytes_sent_per_step, 1448.0 + 18432.0);
  EXPECT_EQ(steps.functions[0].min_calls, 2u);
  EXPECT_EQ(steps.functions[0].max_calls, 2u);
  EXPECT_EQ(steps.functions[1].name, "MPI_Bcast");
  EXPECT_DOUBLE_EQ(steps.functions[1].calls_per_step, 1.0 / 6.0);
  EXPECT_EQ(steps.functions[1].min_calls, 0u);
  EXPECT_EQ(steps.functions[1].max_calls, 1u);
}

TEST_F(TrainingSteps, CollectiveSizesListEachBucketsExactSizeInTraceMode) {
  const auto steps = report().training_steps;
  ASSERT_EQ(steps.collective_sizes.size(), 2u);
  EXPECT_EQ(steps.collective_sizes[0].key, "2^10");
  EXPECT_EQ(steps.collective_sizes[0].calls_per_step, 1.0);
  EXPECT_EQ(steps.collective_sizes[0].exact_sizes, "1 x 1448 B");
  EXPECT_EQ(steps.collective_sizes[1].exact_sizes, "1 x 18432 B");
  const auto text = analysis::render_text_report(report());
  EXPECT_NE(text.find("Training steps: collective sizes per step and rank"), std::string::npos) << text;
  EXPECT_NE(text.find("1 x 18432 B"), std::string::npos);
}

TEST_F(TrainingSteps, StepsMarkedByPcontrolSayWhatMarkedThem) {
  const auto steps = report().training_steps;
  EXPECT_EQ(steps.marked_by, "MPI_Pcontrol(2)");
  EXPECT_NE(analysis::render_text_report(report()).find("marked by MPI_Pcontrol(2)"), std::string::npos);
}

TEST_F(TrainingSteps, MarkdownAndHtmlCarryTheSectionAndHtmlPlotsTheSteps) {
  const auto full = report();
  const auto markdown = analysis::render_markdown_report(full);
  EXPECT_NE(markdown.find("## Training steps\n\n| figure | value |\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| step time, median | 200.000 ms |"), std::string::npos);
  const auto html = analysis::render_html_report(full);
  EXPECT_NE(html.find("<figcaption>Time per training step</figcaption>"), std::string::npos) << html;
  EXPECT_NE(html.find("<title>phase 2: 200.000 ms, 30.001 ms in MPI (mean of ranks)</title>"),
            std::string::npos);
  EXPECT_NE(html.find("text-anchor=\"end\">0 ms</text>"), std::string::npos); // a value axis in ms
}

TEST_F(TrainingSteps, PvarsGiveTheLargestLevelOrTheCountersGrowthPerStep) {
  const auto steps = report().training_steps;
  ASSERT_EQ(steps.pvar_rows.size(), 2u); // the tear-down sample (40) is outside every step
  EXPECT_EQ(steps.pvar_rows[0], (std::vector<std::string>{"match_attempts", "counter", "2", "growth in step",
                                                          "15.00", "15", "3"}));
  EXPECT_EQ(steps.pvar_rows[1],
            (std::vector<std::string>{"unexpected_queue", "size", "2", "largest in step", "3.00", "5", "2"}));
}

TEST_F(TrainingSteps, CudaCopiesArePerStepAndRank) {
  const auto steps = report().training_steps;
  ASSERT_EQ(steps.copy_rows.size(), 1u);
  EXPECT_EQ(steps.copy_rows[0][0], "host_staged");
  EXPECT_EQ(steps.copy_rows[0][1], "0.17");
  EXPECT_EQ(steps.profiler_ns_per_call, 0) << "no own-time row: copies from CUPTI";
  EXPECT_EQ(analysis::render_text_report(report()).find("commlens's own time"), std::string::npos);
}

// Copies from the runtime's calls: commlens's time per call (the ranks' rows pooled) times the
// copies per step and rank, 1 copy of a run of 2 + 1 in 6 rank-steps.
TEST_F(TrainingSteps, CommlensOwnTimePerStepIsItsTimePerRuntimeCallTimesTheCopiesPerStep) {
  {
    TestDatabase database(path_);
    database.execute(R"sql(
UPDATE cuda_copies SET copies = 2;
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id) VALUES
  (1, 1310000000, 1311000000, 0, 'device', 'pinned', 1048576, 7, 'DtoH', 'host_staged', 1),
  (1, 1900000000, 1901000000, 0, 'device', 'pinned', 1048576, 7, 'DtoH', 'host_staged', 2);
INSERT INTO profiler_overhead (rank, component, count, time_ns) VALUES
  (0, 'cuda_runtime_calls', 160, 48000), (1, 'cuda_runtime_calls', 32, 9600), (1, 'init', 1, 5000000);
)sql");
  }
  const auto full = report();
  EXPECT_EQ(full.training_steps.profiler_ns_per_call, 300);
  EXPECT_DOUBLE_EQ(full.training_steps.copies_per_step, 3.0 / 6) << "the tear-down's copy is no step's";
  const auto text = analysis::render_text_report(full);
  EXPECT_NE(text.find("commlens's own time per step on the copying threads"), std::string::npos) << text;
  EXPECT_NE(text.find("150 ns (0.00% of the median step)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.5 copies, 300 ns a CUDA runtime call"), std::string::npos) << text;
}

TEST_F(TrainingSteps, CompareListsPerStepFiguresOfBothRuns) {
  const analysis::Database database(path_);
  const auto comparison = analysis::compare_databases(database, database);
  ASSERT_FALSE(comparison.steps.empty());
  EXPECT_EQ(comparison.steps[0].figure, "steps");
  EXPECT_EQ(comparison.steps[0].a, 3.0);
  bool found = false;
  for (const auto& figure : comparison.steps)
    if (figure.figure == "MPI_Allreduce calls") {
      found = true;
      EXPECT_EQ(figure.b, 2.0);
      EXPECT_EQ(figure.ratio, 1.0);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(analysis::render_comparison_text(comparison).find("Training steps, per step and rank"),
            std::string::npos);
}

// Rank 0 in step 1 also posts an MPI_Iallreduce (the post call 1 us, pending 50.997 ms) and waits
// for it in an MPI_Waitall of 10 ms: 10.001 ms of the pending time inside MPI calls.
TEST(TrainingStepsOverlap, PendingNonblockingAllreducesAreSplitInsideAndOutsideMpiCalls) {
  const auto path = make_temp_directory("commlens-steps-overlap") / "commlens.sqlite";
  {
    TestDatabase database(path);
    fill_training_run(database);
    const std::int64_t s = 1000 * kMs;
    database.execute(fmt::format(
        "INSERT INTO functions (id, name, family) VALUES (5, 'MPI_Iallreduce', 'collective'), "
        "(6, 'MPI_Waitall', 'completion');"
        "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, "
        "peer, "
        "phase) VALUES (100, 0, 0, 5, {0}, {1}, 64, 64, -1, 1), (101, 0, 0, 6, {2}, {3}, 0, 0, -1, 1);"
        "INSERT INTO mpi_requests VALUES (0, 100, 5, {0}, {3}, 101, -1, 64, 64, 0);",
        s + 3000, s + 4000, s + 41 * kMs, s + 51 * kMs));
  }
  const auto steps = analysis::build_report(analysis::Database(path)).training_steps;
  ASSERT_TRUE(steps.nonblocking_allreduce);
  EXPECT_DOUBLE_EQ(steps.in_flight_ns, (51 * kMs - 3000) / 6.0);
  EXPECT_DOUBLE_EQ(steps.in_flight_outside_mpi_ns, (51 * kMs - 3000 - 1000 - 10 * kMs) / 6.0);
}

// Kernels were recorded in step 2 only (phase 2, 1100 to 1300 ms) on both ranks. Each rank's GPU in
// it: compute kernels at 1100-1150 and 1160-1200 ms, NCCL's kernel (mangled, not tied to its
// call) at 1180-1220 ms and a kernel an
// MPI call launched at 1250-1260 ms: compute 90 ms, communication 50 ms, 20 ms of it while compute
// ran, 30 ms exposed, busy 120 ms of 200. A compute kernel in step 3 (not recorded) counts nowhere.
// The NCCL allreduce of each rank in step 2 took 4 ms on the GPU (device_span_stats).
class TrainingStepsGpu : public ::testing::Test {
protected:
  void SetUp() override {
    path_ = make_temp_directory("commlens-steps-gpu") / "commlens.sqlite";
    TestDatabase database(path_);
    fill_training_run(database);
    database.execute(
        "INSERT INTO functions (id, name, family) VALUES (5, 'nccl:AllReduce', 'nccl_collective')");
    for (int rank = 0; rank < 2; ++rank) {
      database.execute(fmt::format(
          "INSERT INTO kernel_recording VALUES ({0}, {1}, {2});"
          "INSERT INTO call_stats VALUES ({0}, 5, 0, 10, -1, 2, 1, 1448, 1448, 1000, 1000, 1000);"
          "INSERT INTO device_span_stats VALUES ({0}, 5, 0, 10, 2, 1, {3}, {3}, {3});",
          rank, 1100 * kMs + 10000, 1300 * kMs, 4 * kMs)); // switched on 10 us after the step began
      const std::vector<std::tuple<int, int, const char*, const char*>> kernels = {
          {1100, 1150, "gemm", "NULL"},
          {1160, 1200, "relu", "NULL"},
          {1180, 1220, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
           "NULL"},
          {1250, 1260, "reduce_kernel", "5"},
          {1400, 1410, "gemm", "NULL"}};
      for (const auto& [start, end, name, call] : kernels)
        database.execute(fmt::format("INSERT INTO cuda_kernels VALUES ({}, {}, {}, 0, 7, '{}', {}, 1)", rank,
                                     start * kMs, end * kMs, name, call));
    }
  }
  analysis::TrainingSteps steps() const {
    return analysis::build_report(analysis::Database(path_)).training_steps;
  }
  std::filesystem::path path_;
};

TEST_F(TrainingStepsGpu, TheKernelsOfARecordedStepSplitComputeCommunicationOverlapAndIdle) {
  const auto section = steps();
  ASSERT_EQ(section.steps.size(), 3u);
  const auto& step = section.steps[1];
  EXPECT_EQ(step.gpu_ranks, 2);
  EXPECT_EQ(step.gpu_compute_ns, 90 * kMs);
  EXPECT_EQ(step.gpu_communication_ns, 50 * kMs);
  EXPECT_EQ(step.gpu_overlapped_ns, 20 * kMs);
  EXPECT_EQ(step.gpu_exposed_ns, 30 * kMs);
  EXPECT_EQ(step.gpu_idle_ns, 80 * kMs);
  EXPECT_EQ(section.steps[0].gpu_ranks, 0);
  EXPECT_EQ(section.steps[2].gpu_ranks, 0); // its kernel was launched outside any recorded span
  EXPECT_EQ(section.gpu_steps, "2");
  EXPECT_EQ(section.median_gpu_exposed_ns, 30 * kMs);
}

TEST_F(TrainingStepsGpu, NcclGpuTimeIsPerStepAndPerCollectiveSize) {
  const auto section = steps();
  EXPECT_EQ(section.steps[1].nccl_gpu_ns, 4 * kMs);
  EXPECT_EQ(section.steps[2].nccl_gpu_ns, 0);
  bool found = false;
  for (const auto& entry : section.collective_sizes)
    if (entry.function == "nccl:AllReduce") {
      found = true;
      EXPECT_EQ(entry.key, "2^10");
      EXPECT_DOUBLE_EQ(entry.gpu_time_per_step_ns, 8.0 * kMs / 6.0); // two rank-steps of six
    }
  EXPECT_TRUE(found);
}

TEST_F(TrainingStepsGpu, TheReportSaysWhichStepsHaveABreakdownAndWhatIsExposed) {
  const auto text = analysis::render_text_report(analysis::build_report(analysis::Database(path_)));
  EXPECT_NE(text.find("GPU breakdown from the kernels of steps"), std::string::npos) << text;
  EXPECT_NE(text.find("exposed communication per step, median (nothing computes meanwhile)"),
            std::string::npos);
  EXPECT_NE(text.find("30.000 ms (15.0%)"), std::string::npos) << text; // of the 200 ms median step
}

TEST(TrainingStepsGpuAbsent, StepsWithoutRecordedKernelsSayWhy) {
  const auto path = make_temp_directory("commlens-steps-nogpu") / "commlens.sqlite";
  {
    TestDatabase database(path);
    fill_training_run(database);
    database.execute(
        "INSERT INTO run (key, value) VALUES ('cuda_kernels', 'steps 6-8 (COMMLENS_KERNELS=steps)');"
        "INSERT INTO kernel_recording VALUES (0, 0, 900000000)");
  }
  const auto section = analysis::build_report(analysis::Database(path)).training_steps;
  EXPECT_TRUE(section.gpu_steps.empty());
  EXPECT_EQ(section.gpu_absent, "kernels were recorded in no step of 3 (kernels recorded: steps 6-8 "
                                "(COMMLENS_KERNELS=steps))");
}

TEST(TrainingStepsAbsent, ARunWithoutStepPhasesSaysSoInOneLine) {
  const auto path = make_temp_directory("commlens-no-steps") / "commlens.sqlite";
  {
    TestDatabase database(path);
    fill_three_rank_run(database);
  }
  const auto report = analysis::build_report(analysis::Database(path));
  EXPECT_FALSE(report.training_steps.absent.empty());
  // Gathered with the other empty sections in one line at the end.
  EXPECT_NE(analysis::render_text_report(report).find("; Training steps (no step phases"), std::string::npos);
}

} // namespace
} // namespace commlens::test
