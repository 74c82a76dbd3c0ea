// What the viewer's charts read, on databases whose rows the test states: CUDA copies per route
// (direction and host memory apart), the partner matrix by kind of traffic, the implementation pair
// an A/B run is compared by, and a report without the sections the viewer does not show.
#include "commlens/analysis/breakdowns.hpp"
#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/gpu_streams.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/timeline.hpp"
#include "test_database.hpp"
#include "trace_database.hpp"

#include <gtest/gtest.h>

namespace commlens::test {
namespace {

std::filesystem::path database_with(std::string_view name, const std::string& sql, bool trace_run = false) {
  const auto path = make_temp_directory("commlens-viewer-breakdowns") / name;
  TestDatabase database(path);
  if (trace_run)
    fill_trace_run(database);
  database.execute(sql);
  return path;
}

// Rank 0 copies host to device from pageable memory twice (1 KiB in 1 us, 3 KiB in 2 us) and from
// pinned memory once (4 KiB in 1 us), and device to host into pinned memory once (2 KiB in 1 us).
constexpr const char* kCopies = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id) VALUES
  (0, 1000, 2000, 0, 'pageable', 'device', 1024, 7, 'HtoD', 'host_staged', 1),
  (0, 5000, 7000, 0, 'pageable', 'device', 3072, 7, 'HtoD', 'host_staged', 2),
  (0, 3000, 4000, 0, 'pinned', 'device', 4096, 7, 'HtoD', 'host_staged', 3),
  (0, 8000, 9000, 0, 'device', 'pinned', 2048, 8, 'DtoH', 'host_staged', 4);
)sql";

TEST(CopyRoutes, CopiesAreSplitByDirectionAndHostMemory) {
  const analysis::Database database(database_with("copies.sqlite", kCopies));
  const auto usage = analysis::query_copy_path_usage(database);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage[0].route, (analysis::CopyRoute{"host_staged", std::nullopt, "DtoH", "pinned"}));
  EXPECT_EQ(usage[0].bytes, 2048u);
  EXPECT_EQ(usage[1].route, (analysis::CopyRoute{"host_staged", std::nullopt, "HtoD", "pageable"}));
  EXPECT_EQ(usage[1].copies, 2u);
  EXPECT_EQ(usage[1].bytes, 4096u);
  EXPECT_EQ(usage[1].busy_ns, 3000);
  EXPECT_DOUBLE_EQ(usage[1].gb_per_s().value_or(0), 4096.0 / 3000.0); // bytes over the copies' own time
  EXPECT_EQ(usage[2].route.host_memory, "pinned");
  EXPECT_DOUBLE_EQ(usage[2].gb_per_s().value_or(0), 4.096);
  // The first start and last end of one route's copies, for "show them in the timeline".
  EXPECT_EQ(analysis::query_copy_span(database, usage[1].route, 0, 0),
            (std::pair<std::int64_t, std::int64_t>{1000, 7000}));
  EXPECT_EQ(analysis::query_copy_span(database, usage[1].route, 1, 0), std::nullopt);
  // Over time: each route's bytes in the slice each copy starts in, [0, 10000) in 5 slices.
  const auto series = analysis::query_copy_path_series(database, 0, 10000, 5);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[1].route.host_memory, "pageable");
  EXPECT_EQ(series[1].bytes_per_bin, (std::vector<std::uint64_t>{1024, 0, 3072, 0, 0}));
  EXPECT_EQ(series[2].bytes_per_bin, (std::vector<std::uint64_t>{0, 4096, 0, 0, 0}));
}

// Copies taken from the CUDA runtime's calls: only a sample is timed on the GPU (gpu_timed = 1);
// the others keep their host call's times. Rank 0 copies device to device 4 times, 1 MiB each:
// the first timed (1 MiB in 10 us), the others not (their calls took 2 us each).
constexpr const char* kSampledCopies = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id, gpu_timed) VALUES
  (0, 1000, 11000, 0, 'device', 'device', 1048576, 7, 'DtoD', 'same_device', 0, 1),
  (0, 20000, 22000, 0, 'device', 'device', 1048576, 7, 'DtoD', 'same_device', 0, 0),
  (0, 30000, 32000, 0, 'device', 'device', 1048576, 7, 'DtoD', 'same_device', 0, 0),
  (0, 40000, 42000, 0, 'device', 'device', 1048576, 7, 'DtoD', 'same_device', 0, 0);
)sql";

// The same copies as summary mode stores them: the three untimed ones one after another are one
// row standing for all three (cuda_copies.copies), their bytes summed.
constexpr const char* kSummaryCopies = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id, gpu_timed, copies) VALUES
  (0, 1000, 11000, 0, 'device', 'device', 1048576, 7, 'DtoD', 'same_device', 0, 1, 1),
  (0, 20000, 42000, 0, 'device', 'device', 3145728, 7, 'DtoD', 'same_device', 0, 0, 3);
)sql";

void expect_four_copies_one_timed(const std::string& name, const char* sql) {
  SCOPED_TRACE(name);
  const analysis::Database database(database_with(name, sql));
  const auto usage = analysis::query_copy_path_usage(database);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].copies, 4u);
  EXPECT_EQ(usage[0].bytes, 4u << 20);
  EXPECT_EQ(usage[0].busy_ns, 10000) << "the timed copy's GPU time alone";
  EXPECT_DOUBLE_EQ(usage[0].gb_per_s().value_or(0), 1048576.0 / 10000.0) << "the timed copy's bandwidth";
  // The report's copy paths: every copy counted, time and bandwidth from the timed one.
  const auto report = analysis::build_report(database);
  ASSERT_EQ(report.cuda_copies.rows.size(), 1u);
  const auto& row = report.cuda_copies.rows[0];
  EXPECT_EQ(std::get<std::int64_t>(row[1]), 4);
  EXPECT_EQ(std::get<std::int64_t>(row[2]), 4 << 20);
  EXPECT_EQ(std::get<std::int64_t>(row[3]), 1) << "copies timed on the GPU";
  EXPECT_EQ(std::get<std::int64_t>(row[4]), 10000);
  EXPECT_DOUBLE_EQ(std::get<double>(row[5]), 1048576.0 / 10000.0);
  // The timeline draws on the GPU only what ran there when it says.
  const auto copies = analysis::query_timeline_copies(database, 0, 0, 100000);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].start_ns, 1000);
  const auto streams = analysis::query_gpu_streams(database);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].copies, 4u);
}

TEST(CopyRoutes, CopiesNotTimedOnTheGpuCountButGiveNoTimeOrBandwidth) {
  expect_four_copies_one_timed("sampled.sqlite", kSampledCopies);
}

TEST(CopyRoutes, ARowStandingForARunOfCopiesCountsThemAll) {
  expect_four_copies_one_timed("summary-runs.sqlite", kSummaryCopies);
}

// MPI: rank 1 sends rank 0 two messages of 100 B. NCCL: rank 0 sends NCCL rank 1 (run rank 2) 50 B
// on communicator 7 (members 0, 2, 1 in NCCL rank order); rank 0 puts 300 B into one allreduce on
// it, rank 2 120 B into two.
constexpr const char* kTraffic = R"sql(
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, finalized) VALUES
  (0, 'a', 1, 0, 10, 1), (1, 'a', 2, 0, 10, 1), (2, 'a', 3, 0, 10, 1);
INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Send', 'p2p'), (5, 'nccl:AllReduce', 'nccl_collective'),
  (6, 'nccl:Send', 'nccl_p2p');
INSERT INTO communicators (id, rank, local_rank, size, is_inter, members) VALUES
  (7, 0, 0, 3, 0, '0,-1,-1'), (7, 2, 1, 3, 0, '-1,2,-1'), (7, 1, 2, 3, 0, '-1,-1,1');
INSERT INTO call_stats VALUES
  (1, 1, 0, 6, 0, 0, 2, 200, 0, 10, 5, 5),
  (0, 5, 7, 8, -1, 0, 1, 300, 300, 10, 10, 10),
  (2, 5, 7, 6, -1, 0, 2, 120, 120, 10, 5, 5),
  (0, 6, 7, 5, -1, 0, 1, 50, 0, 10, 10, 10);
INSERT INTO nccl_call_stats (rank, function_id, comm_id, size_bin, phase, peer, group_depth, count, bytes_sent,
                             bytes_recv, time_total_ns, time_min_ns, time_max_ns) VALUES
  (0, 6, 7, 5, 0, 1, 0, 1, 50, 0, 10, 10, 10);
)sql";

TEST(PartnerTraffic, MpiAndNcclAreApartAndCollectivesAreSpreadOverTheOtherMembers) {
  const analysis::Database database(database_with("traffic.sqlite", kTraffic));
  using analysis::TrafficKind;
  std::vector<std::tuple<TrafficKind, int, int, std::uint64_t, double>> cells;
  for (const auto& cell : analysis::query_partner_traffic(database))
    cells.emplace_back(cell.kind, cell.from, cell.to, cell.operations, cell.bytes);
  EXPECT_EQ(cells, (decltype(cells){{TrafficKind::MpiPointToPoint, 1, 0, 2, 200},
                                    {TrafficKind::NcclPointToPoint, 0, 2, 1, 50},
                                    {TrafficKind::NcclCollective, 0, 1, 1, 150},
                                    {TrafficKind::NcclCollective, 0, 2, 1, 150},
                                    {TrafficKind::NcclCollective, 2, 0, 2, 60},
                                    {TrafficKind::NcclCollective, 2, 1, 2, 60}}));
}

// The crafted trace run's calls (implementation mpi) plus four MPI_Allreduce of 64 B by
// runtime:ring; here also four by mpi:host_staged, the baseline the runtime alternated with.
TEST(ImplementationPair, AnAbRunComparesItsRuntimeWithTheBaselineOfTheSameCalls) {
  const auto path = make_temp_directory("commlens-viewer-breakdowns") / "ab.sqlite";
  {
    TestDatabase database(path);
    fill_trace_run(database);
    add_runtime_implementation_calls(database);
    database.execute(R"sql(
INSERT INTO implementations (id, name) VALUES (2, 'mpi:host_staged');
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, comm_id,
                       implementation, phase)
  SELECT id + 1000, rank, thread, function_id, start_ns + 100000, end_ns + 100000, bytes_sent, bytes_recv, peer,
         comm_id, 2, phase FROM mpi_calls WHERE implementation = 1;
)sql");
  }
  const analysis::Database database(path);
  EXPECT_EQ(analysis::default_implementation_pair(database),
            (std::pair<std::string, std::string>{"mpi:host_staged", "runtime:ring"}));
  const analysis::Database one(database_with("one.sqlite", "", true));
  EXPECT_EQ(analysis::default_implementation_pair(one), std::nullopt); // no runtime implementation
}

TEST(ViewerReport, LeavesOutQueueTimesAndConcurrencyAndSaysSo) {
  const analysis::Database database(database_with("trace.sqlite", "", true));
  const auto full = analysis::build_report(database);
  ASSERT_FALSE(full.queue_times.empty());
  const auto viewer = analysis::build_report(database, {}, {}, {.queue_times = false, .concurrency = false});
  EXPECT_TRUE(viewer.queue_times.empty());
  EXPECT_EQ(viewer.queue_times_absent.reason, "not read");
  EXPECT_TRUE(viewer.concurrency.empty());
  EXPECT_EQ(viewer.concurrency_absent.reason, "not read");
  EXPECT_EQ(viewer.functions.size(), full.functions.size());
}

// The viewer paints before it looks for findings: the report leaves them out, and build_findings
// finds the same ones later (the three-rank run's load imbalance in phase 0).
TEST(ViewerReport, LeavesOutTheFindingsForBuildFindingsToFindLater) {
  const auto path = make_temp_directory("commlens-viewer-report") / "three-ranks.sqlite";
  {
    TestDatabase database(path);
    fill_three_rank_run(database);
  }
  const analysis::Database database(path);
  const auto full = analysis::build_report(database);
  ASSERT_EQ(full.findings.findings.size(), 1u);
  EXPECT_EQ(full.findings.findings[0].id, "load-imbalance@phase-0");
  const auto viewer = analysis::build_report(database, {}, {}, {.findings = false});
  EXPECT_TRUE(viewer.findings.findings.empty());
  EXPECT_TRUE(viewer.findings.not_analysed.empty());
  const auto later = analysis::build_findings(database, viewer);
  ASSERT_EQ(later.findings.size(), 1u);
  EXPECT_EQ(later.findings[0].id, "load-imbalance@phase-0");
  EXPECT_EQ(later.findings[0].cost_ns, full.findings.findings[0].cost_ns);
  EXPECT_EQ(later.not_analysed, full.findings.not_analysed);
}

} // namespace
} // namespace commlens::test
