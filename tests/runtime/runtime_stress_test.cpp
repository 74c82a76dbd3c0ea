// The runtime under a long mixed load (tests/runtime/programs/runtime_stress: thousands of random
// allreduce and point-to-point calls on reused and recycled device buffers, every result checked
// by the program), then what must hold after MPI_Finalize: GPU memory back to its start level, and
// every CUDA IPC mapping the runtime opened closed again (ipc_events). The trace must also hold one
// runtime_ops row per device call the program counted. Also the engine's other resources: GPU
// memory stays bounded when every call brings fresh buffers (tests/runtime/programs/realloc_check), and the
// copy paths are measured once per node, then read from the node's file. Without a GPU the cases
// skip, saying so.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <unistd.h>

namespace commlens::integration {
namespace {

struct Counted {
  std::int64_t allreduce = 0;
  std::int64_t device_sends = 0;
  std::int64_t device_receives = 0;
  std::int64_t host_rendezvous_receives = 0;
};

std::map<int, Counted> counted_per_rank(const std::string& output) {
  std::map<int, Counted> counted;
  const std::regex line(R"(rank (\d+): allreduce (\d+) device_sends (\d+) device_receives (\d+) )"
                        R"(host_rendezvous_receives (\d+) failures 0)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    counted[std::stoi((*it)[1])] = {std::stoll((*it)[2]), std::stoll((*it)[3]), std::stoll((*it)[4]),
                                    std::stoll((*it)[5])};
  }
  return counted;
}

// Skips (returns false with *skip set) where there is nothing to run on.
bool can_run(int ranks, std::string* skip) {
  *skip = cuda_tests::why_gpu_check_cannot_run(
      COMMLENS_CHECK_PROGRAM, 1, "the runtime stress run with " + std::to_string(ranks) + " ranks");
  return skip->empty();
}

// path_file: the node's file of measured copy paths (default: one in the job's fresh directory).
JobResult run_stress(int ranks, long calls, const std::string& leak_mib,
                     const std::string& path_file = "paths.json") {
  // Eager module loading: kernels loaded at their first launch would count as memory not returned.
  return run_profiled_job(
      {.command = {COMMLENS_CHECK_PROGRAM, std::to_string(calls), ".", "4194304", leak_mib},
       .mode = "trace",
       .environment = {{"COMMLENS_RUNTIME", "on"},
                       {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,p2p"},
                       {"COMMLENS_RUNTIME_PATHS", path_file},
                       {"CUDA_MODULE_LOADING", "EAGER"}},
       .timeout_seconds = 600,
       .ranks = ranks});
}

std::int64_t rows(const Database& db, int rank, const std::string& functions) {
  return db.scalar(
      "SELECT count(*) FROM runtime_ops o JOIN functions f ON f.id = o.function_id WHERE o.rank = " +
      std::to_string(rank) + " AND f.name IN (" + functions + ")");
}

TEST(RuntimeStress, FourRanksRunThousandsOfMixedCallsAndReturnEveryGpuResourceAtFinalize) {
  constexpr int kRanks = 4;
  std::string skip;
  if (!can_run(kRanks, &skip)) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_stress(kRanks, 3000, "0");
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("runtime_stress: ok"), std::string::npos) << job.describe();
  const std::map<int, Counted> counted = counted_per_rank(job.standard_output);
  ASSERT_EQ(static_cast<int>(counted.size()), kRanks) << job.describe();
  const Database db(job.merged_database());
  for (const auto& [rank, expected] : counted) {
    EXPECT_GT(expected.allreduce, 1000) << "rank " << rank;
    EXPECT_EQ(rows(db, rank, "'MPI_Allreduce'"), expected.allreduce) << "rank " << rank;
    EXPECT_EQ(rows(db, rank, "'MPI_Send', 'MPI_Isend'"), expected.device_sends) << "rank " << rank;
    EXPECT_EQ(rows(db, rank, "'MPI_Recv', 'MPI_Irecv'"),
              expected.device_receives + expected.host_rendezvous_receives)
        << "rank " << rank;
    // The runtime mapped its peers' buffers, and closed every mapping by the end of MPI_Finalize.
    const std::string of_rank = " AND rank = " + std::to_string(rank);
    const std::int64_t opens = db.scalar("SELECT count(*) FROM ipc_events WHERE event = 'open'" + of_rank);
    EXPECT_GT(opens, 0) << "rank " << rank;
    EXPECT_EQ(db.scalar("SELECT count(*) FROM ipc_events WHERE event = 'close'" + of_rank), opens)
        << "rank " << rank;
  }
}

// The memory check is not vacuous: 256 MiB kept allocated past MPI_Finalize is reported.
TEST(RuntimeStress, TheLeakCheckReportsGpuMemoryKeptPastFinalize) {
  std::string skip;
  if (!can_run(2, &skip)) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_stress(2, 40, "256");
  EXPECT_NE(job.exit_code, 0) << job.describe();
  EXPECT_NE(job.standard_output.find("GPU memory not released"), std::string::npos) << job.describe();
  EXPECT_NE(job.standard_output.find("runtime_stress: FAILED"), std::string::npos) << job.describe();
}

// Buffers allocated for every call and freed after it (tests/runtime/programs/realloc_check, 16 calls of
// 512 MiB): the runtime's mappings of freed buffers must not keep their memory allocated. Without
// the cache's bounds this held 49 GB on an H100 with four ranks.
TEST(RuntimeStress, FreshBuffersEveryCallLeaveNoFreedMemoryHeldByMappings) {
  constexpr int kRanks = 4;
  if (const std::string skip =
          cuda_tests::why_gpu_check_cannot_run(COMMLENS_REALLOC_PROGRAM, 1, "the fresh-buffers run");
      !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_profiled_job({.command = {COMMLENS_REALLOC_PROGRAM, "16", "536870912"},
                                          .environment = {{"COMMLENS_RUNTIME", "on"}},
                                          .timeout_seconds = 300,
                                          .ranks = kRanks});
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  ASSERT_NE(job.standard_output.find("realloc_check: ok"), std::string::npos) << job.describe();
  std::smatch memory;
  ASSERT_TRUE(std::regex_search(job.standard_output, memory,
                                std::regex(R"(gpu_memory: start ([0-9.]+) MiB peak ([0-9.]+) MiB)")));
  // Sampled after each call's buffers were freed: what the runtime holds then (its pools and
  // scratch), not 6 mappings of 512 MiB per call.
  EXPECT_LT(std::stod(memory[2]) - std::stod(memory[1]), 4096.0) << memory[0];
}

// Device buffers allocated for each count and freed before the next, as frameworks free and reuse
// GPU memory: every rank's sums and in-place maxima right, in both modes, and every call stored
// with its bytes, its datatype and device as its buffers' location.
TEST(RuntimeStress, BuffersFreedAndReallocatedBetweenCallsGiveRightResultsAndRows) {
  constexpr int kRanks = 4;
  if (const std::string skip =
          cuda_tests::why_gpu_check_cannot_run(COMMLENS_ALLOC_REUSE_PROGRAM, 1, "the reallocation run");
      !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  for (const char* mode : {"on", "ab"}) {
    const JobResult job =
        run_profiled_job({.command = {COMMLENS_ALLOC_REUSE_PROGRAM, "2"},
                          .environment = {{"COMMLENS_RUNTIME", mode}, {"COMMLENS_MODE", "trace"}},
                          .timeout_seconds = 300,
                          .ranks = kRanks});
    ASSERT_EQ(job.exit_code, 0) << mode << ": " << job.describe();
    EXPECT_NE(job.standard_output.find("alloc_reuse_check: ok"), std::string::npos) << job.describe();
    const auto rows = Database(job.merged_database())
                          .query("SELECT count(*), sum(c.bytes_sent = c.bytes_recv AND c.bytes_sent > 0 AND "
                                 "c.buffer_location = 2 AND c.datatype IS NOT NULL) FROM mpi_calls c JOIN "
                                 "functions f ON f.id = c.function_id WHERE f.name = 'MPI_Allreduce'");
    // 2 rounds x 6 counts x 2 calls per rank.
    EXPECT_EQ(rows[0][0].as_int(), 2 * 6 * 2 * kRanks) << mode;
    EXPECT_EQ(rows[0][1].as_int(), 2 * 6 * 2 * kRanks)
        << mode << ": rows without bytes, datatype or location";
  }
}

// One value per GPU the ranks lead.
std::vector<std::string> path_values(const JobResult& job) {
  std::vector<std::string> values;
  for (const auto& row : Database(job.merged_database())
                             .query("SELECT value FROM run WHERE key LIKE "
                                    "'runtime_paths.%' ORDER BY key")) {
    values.push_back(row[0].text.value_or(""));
  }
  return values;
}

// The first run measures the GPUs' copy paths and stores them in the node's file; the next reads
// them from there instead of measuring again.
TEST(RuntimeStress, CopyPathsAreMeasuredOnceThenReadFromTheNodesFile) {
  std::string skip;
  if (!can_run(2, &skip)) {
    GTEST_SKIP() << skip;
  }
  const auto directory =
      std::filesystem::temp_directory_path() / ("commlens_paths_" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  const std::string file = (directory / "paths.json").string();
  const JobResult first = run_stress(2, 10, "0", file);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  ASSERT_TRUE(std::filesystem::exists(file));
  const std::vector<std::string> measured = path_values(first);
  ASSERT_GE(measured.size(), 1u);
  const std::regex figures(R"(host->GPU ([0-9.]+) GB/s, GPU->host ([0-9.]+) GB/s)");
  for (const std::string& value : measured) {
    std::cout << "runtime_paths: " << value << "\n";
    EXPECT_EQ(value.rfind("measured, stored in " + file + ": host->GPU ", 0), 0u) << value;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(value, match, figures)) << value;
    EXPECT_GT(std::stod(match[1]), 1.0) << value; // PCIe moves gigabytes per second, any generation
    EXPECT_GT(std::stod(match[2]), 1.0) << value;
  }

  const JobResult second = run_stress(2, 10, "0", file);
  ASSERT_EQ(second.exit_code, 0) << second.describe();
  const std::vector<std::string> read = path_values(second);
  ASSERT_EQ(read.size(), measured.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i], "read from " + file + measured[i].substr(measured[i].find(':')));
  }
  std::filesystem::remove_all(directory);
}

} // namespace
} // namespace commlens::integration
