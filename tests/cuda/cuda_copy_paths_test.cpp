// GPU tests of the CUDA collectors: each profiles one program of examples/cuda (two ranks, trace
// mode, every collector on) and compares the stored copies per rank and path, their byte totals,
// their MPI call ids and the IPC events with what the program does (documented in its header).
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>

namespace commlens::integration {
namespace {

constexpr int kRanksOnGpus = 2;
constexpr int kIterations = 20;
constexpr std::int64_t kBytes = 1 << 20;
constexpr std::int64_t kReduceBytes = 256 * 4;

std::string cuda_example(const std::string& name) {
  return (std::filesystem::path(COMMLENS_CUDA_EXAMPLES_DIR) / name).string();
}

struct PathTotals {
  std::int64_t copies = 0, bytes = 0;
  bool operator==(const PathTotals&) const = default;
};
std::ostream& operator<<(std::ostream& out, const PathTotals& t) {
  return out << t.copies << " copies, " << t.bytes << " B";
}

// (rank, path) -> totals, as stored in cuda_copies.
std::map<std::pair<int, std::string>, PathTotals> copies_per_path(const Database& db) {
  std::map<std::pair<int, std::string>, PathTotals> totals;
  for (const Row& row :
       db.query("SELECT rank, path, count(*), sum(bytes) FROM cuda_copies GROUP BY rank, path")) {
    totals[{static_cast<int>(row[0].as_int()), *row[1].text}] = {row[2].as_int(), row[3].as_int()};
  }
  return totals;
}

// Totals of one rank and path; zero when there is no such row (shown as such by a failing check).
PathTotals totals_of(const std::map<std::pair<int, std::string>, PathTotals>& totals, int rank,
                     const std::string& path) {
  const auto found = totals.find({rank, path});
  return found != totals.end() ? found->second : PathTotals{};
}

void print_copies_per_path(const Database& db, const std::string& program) {
  for (const auto& [key, totals] : copies_per_path(db)) {
    std::cout << program << ": rank " << key.first << " path " << key.second << ": " << totals << "\n";
  }
}

class GpuProgram : public ::testing::Test {
protected:
  // Skips (naming what) unless the machine has `gpus` GPUs; else runs the program profiled.
  std::unique_ptr<Database> profile(const std::string& what, int gpus, std::vector<std::string> command) {
    const int present = cuda_tests::gpu_count();
    if (present < gpus) {
      skipped_ = true;
      return nullptr;
    }
    result_ = run_profiled_job({.command = std::move(command),
                                .mode = "trace",
                                .environment = {{"COMMLENS_COLLECTORS", "all"}},
                                .timeout_seconds = 240,
                                .ranks = kRanksOnGpus});
    EXPECT_EQ(result_.exit_code, 0) << what << ": " << result_.describe();
    if (result_.exit_code != 0) {
      return nullptr;
    }
    auto db = std::make_unique<Database>(result_.merged_database());
    EXPECT_EQ(db->scalar("SELECT count(*) FROM run WHERE key = 'cuda_collectors' AND value = 'on'"), 1)
        << what << ": " << result_.describe();
    print_copies_per_path(*db, what);
    return db;
  }
  // "rank R op_invocations K" lines of the staged exchange.
  std::map<int, std::int64_t> op_invocations() const {
    std::map<int, std::int64_t> found;
    const std::regex line(R"(rank (\d+) op_invocations (\d+))");
    const std::string& out = result_.standard_output;
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
      found[std::stoi((*it)[1])] = std::stoll((*it)[2]);
    }
    return found;
  }
  bool skipped_ = false;
  JobResult result_;
};

#define SKIP_WITHOUT_GPUS(db, gpus, what)                                                                    \
  if (skipped_) {                                                                                            \
    GTEST_SKIP() << (cuda_tests::gpu_count() == 0 ? "no CUDA device: skipped "                               \
                                                  : "fewer than " #gpus " GPUs: skipped ")                   \
                 << what;                                                                                    \
  }                                                                                                          \
  ASSERT_TRUE(db)

void expect_staged_exchange(const Database& db, const std::map<int, std::int64_t>& op_invocations,
                            const std::string& what) {
  const auto totals = copies_per_path(db);
  ASSERT_EQ(op_invocations.size(), 2u) << what << ": the program did not report its op invocations";
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::int64_t ops = op_invocations.at(rank);
    const PathTotals staged{2 * kIterations + 2 * ops, 2 * kIterations * kBytes + 2 * ops * kReduceBytes};
    const PathTotals same_device{kIterations, kIterations * kBytes};
    EXPECT_EQ(totals_of(totals, rank, "host_staged"), staged) << what << " rank " << rank;
    EXPECT_EQ(totals_of(totals, rank, "same_device"), same_device) << what << " rank " << rank;
    // Exactly the op's copies ran inside an MPI call: they carry that MPI_Reduce's id and lie
    // within its start and end on the merged timeline.
    const std::string r = std::to_string(rank);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM cuda_copies WHERE mpi_call_id IS NOT NULL AND rank = " + r),
              2 * ops)
        << what << " rank " << rank;
    EXPECT_EQ(
        db.scalar("SELECT count(*) FROM cuda_copies c JOIN mpi_calls m ON m.id = c.mpi_call_id "
                  "JOIN functions f ON f.id = m.function_id WHERE f.name = 'MPI_Reduce' AND m.rank = c.rank "
                  "AND c.start_ns >= m.start_ns AND c.end_ns <= m.end_ns AND c.bytes = " +
                  std::to_string(kReduceBytes) + " AND c.rank = " + r),
        2 * ops)
        << what << " rank " << rank;
  }
  std::int64_t all_ops = 0;
  for (const auto& [rank, ops] : op_invocations) {
    all_ops += ops;
  }
  EXPECT_EQ(all_ops, kIterations) << what << ": MPI_Reduce of 2 ranks applies the op once per call";
}

TEST_F(GpuProgram, StagedExchangeStoresHostStagedAndSameDeviceCopiesWithTheirMpiCalls) {
  auto db = profile("staged_exchange", 1,
                    {cuda_example("staged_exchange"), std::to_string(kIterations), std::to_string(kBytes)});
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange (host-staged copies)");
  expect_staged_exchange(*db, op_invocations(), "staged_exchange");
}

TEST_F(GpuProgram, TwoRanksOnOneSharedGpuStoreTheSameCopiesOnDeviceZero) {
  auto db = profile(
      "staged_exchange same-gpu", 1,
      {cuda_example("staged_exchange"), std::to_string(kIterations), std::to_string(kBytes), "same-gpu"});
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange same-gpu (two ranks on one GPU)");
  expect_staged_exchange(*db, op_invocations(), "staged_exchange same-gpu");
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE device <> 0"), 0);
}

TEST_F(GpuProgram, IpcPeerCopyStoresIpcCopiesWithTheirLinkAndEveryHandleOpen) {
  auto db = profile("ipc_peer_copy", 2,
                    {cuda_example("ipc_peer_copy"), std::to_string(kIterations), std::to_string(kBytes)});
  SKIP_WITHOUT_GPUS(db, 2, "ipc_peer_copy (CUDA IPC and peer copies)");
  const auto totals = copies_per_path(*db);
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(totals_of(totals, rank, "ipc"), (PathTotals{2 * kIterations, 2 * kIterations * kBytes}))
        << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT count(*) FROM ipc_events WHERE event = 'get_handle' AND rank = " + r), 1);
    EXPECT_EQ(db->scalar("SELECT count(*) FROM ipc_events WHERE event = 'open' AND rank = " + r), 2);
    EXPECT_EQ(db->scalar("SELECT count(*) FROM ipc_events WHERE event = 'close' AND rank = " + r), 2);
    EXPECT_EQ(db->scalar("SELECT max(open_number) FROM ipc_events WHERE event = 'open' AND rank = " + r), 2)
        << "the second open of the same handle is numbered 2";
    EXPECT_GE(db->scalar("SELECT min(bytes) FROM ipc_events WHERE event = 'open' AND rank = " + r), kBytes);
  }
  // cudaMemcpyPeer without peer access: the driver's DtoH + HtoD through host memory.
  EXPECT_EQ(totals_of(totals, 0, "host_staged"), (PathTotals{2 * kIterations, 2 * kIterations * kBytes}));
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE rank = 0 AND copy_kind = 'DtoH'"),
            kIterations);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE rank = 0 AND copy_kind = 'HtoD'"),
            kIterations);
  EXPECT_EQ(totals_of(totals, 1, "host_staged"), PathTotals{});
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'ipc' AND link IS NULL"), 0)
      << "ipc copies between two GPUs name their link";
  for (const Row& row :
       db->query("SELECT path, link, count(*) FROM cuda_copies WHERE link IS NOT NULL GROUP BY 1, 2")) {
    std::cout << "ipc_peer_copy: path " << *row[0].text << " link " << *row[1].text << ": " << row[2].as_int()
              << "\n";
  }
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE mpi_call_id IS NOT NULL"), 0)
      << "every copy ran outside MPI calls";
}

TEST_F(GpuProgram, NcclAllreduceStoresOneKernelPerCallAndTheApplicationsCopies) {
  if (!COMMLENS_HAVE_NCCL_EXAMPLE) {
    GTEST_SKIP() << "NCCL not found at build time: skipped nccl_allreduce";
  }
  auto db =
      profile("nccl_allreduce", 2, {cuda_example("nccl_allreduce"), std::to_string(kIterations), "1048576"});
  SKIP_WITHOUT_GPUS(db, 2, "nccl_allreduce (NCCL kernels)");
  EXPECT_NE(result_.standard_output.find("allreduce ok"), std::string::npos) << result_.describe();
  constexpr std::int64_t kBufferBytes = 1048576 * 4;
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_kernels WHERE name LIKE '%AllReduce%' AND rank = " + r),
              kIterations + 1)
        << "rank " << rank;
    // kIterations + 1 uploads of the ones and one download of the result.
    EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'host_staged' AND bytes = " +
                         std::to_string(kBufferBytes) + " AND rank = " + r),
              kIterations + 2)
        << "rank " << rank;
  }
  EXPECT_EQ(
      db->scalar(
          "SELECT count(*) FROM cuda_kernels WHERE name LIKE '%AllReduce%' AND mpi_call_id IS NOT NULL"),
      0)
      << "NCCL kernels are launched outside MPI calls";
}

} // namespace
} // namespace commlens::integration
