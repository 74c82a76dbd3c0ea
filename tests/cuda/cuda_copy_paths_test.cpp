// GPU tests of the copy paths: each profiles one program of examples/cuda and compares the stored
// copies per rank and path, their byte totals, their MPI call ids and the IPC events with what the
// program does (documented in its header).
#include "gpu_program.hpp"

namespace commlens::integration {
namespace {

std::int64_t sum_of(const std::map<int, std::int64_t>& per_rank) {
  std::int64_t sum = 0;
  for (const auto& [rank, value] : per_rank) {
    sum += value;
  }
  return sum;
}

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
    EXPECT_EQ(rows_inside(db, "cuda_copies", "MPI_Reduce", rank, "c.bytes = " + std::to_string(kReduceBytes)),
              2 * ops)
        << what << " rank " << rank;
  }
  EXPECT_EQ(sum_of(op_invocations), kIterations)
      << what << ": MPI_Reduce of 2 ranks applies the op once per call";
}

TEST_F(GpuProgram, StagedExchangeStoresHostStagedAndSameDeviceCopiesWithTheirMpiCalls) {
  auto db = profile_example("staged_exchange", "staged_exchange", 1);
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange (host-staged copies)");
  expect_staged_exchange(*db, op_invocations(), "staged_exchange");
}

TEST_F(GpuProgram, TwoRanksOnOneSharedGpuStoreTheSameCopiesOnDeviceZero) {
  auto db = profile_example("staged_exchange same-gpu", "staged_exchange", 1, {"same-gpu"});
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange same-gpu (two ranks on one GPU)");
  expect_staged_exchange(*db, op_invocations(), "staged_exchange same-gpu");
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE device <> 0"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'peer'"), 0)
      << "two processes on one GPU copy through the host, not between devices";
}

void expect_peer_copy(const Database& database, const std::map<int, std::int64_t>& ops_per_rank) {
  const Database* db = &database;
  const auto totals = copies_per_path(*db);
  ASSERT_EQ(ops_per_rank.size(), 2u) << "the program did not report its op invocations";
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::int64_t ops = ops_per_rank.at(rank);
    const std::string r = std::to_string(rank);
    EXPECT_EQ(totals_of(totals, rank, "peer"),
              (PathTotals{kIterations + ops, kIterations * kBytes + ops * kReduceBytes}))
        << "rank " << rank;
    EXPECT_EQ(totals_of(totals, rank, "host_staged"), (PathTotals{2 * ops, 2 * ops * kReduceBytes}))
        << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'peer' AND rank = " + r +
                         " AND src_device = " + std::to_string(rank % 2) +
                         " AND dst_device = " + std::to_string(1 - rank % 2)),
              kIterations + ops)
        << "rank " << rank << " copies from its own device to the other";
    EXPECT_EQ(rows_inside(*db, "cuda_copies", "MPI_Reduce", rank, "c.path = 'peer'"), ops) << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE mpi_call_id IS NOT NULL AND rank = " + r),
              3 * ops)
        << "rank " << rank << ": only the op's copies ran inside MPI calls";
  }
  EXPECT_EQ(sum_of(ops_per_rank), kIterations);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'peer' AND link IS NULL"), 0)
      << "peer copies name their link";
  for (const Row& row : db->query("SELECT link, count(*) FROM cuda_copies WHERE path = 'peer' GROUP BY 1")) {
    std::cout << "peer_copy: link " << *row[0].text << ": " << row[1].as_int() << " copies\n";
  }
}

TEST_F(GpuProgram, PeerCopyStoresPeerCopiesBetweenTheTwoGpusWithTheirLinkAndMpiCalls) {
  auto db = profile_example("peer_copy", "peer_copy", 2);
  SKIP_WITHOUT_GPUS(db, 2, "peer_copy (peer-to-peer copies between two GPUs)");
  expect_peer_copy(*db, op_invocations());
}

// From the runtime's calls in trace mode, each call the program made through libcudart has its
// cuda_api_calls row, named as CUPTI names it, and each copy shares its call's correlation id: an
// untimed copy has its call's times, a timed one starts within its call.
void expect_staged_exchange_calls(const Database& db, const std::map<int, std::int64_t>& op_invocations) {
  const auto calls_of = [&db](int rank, const std::string& function) {
    return db.scalar(
        "SELECT count(*) FROM cuda_api_calls a JOIN cuda_api_functions f ON f.id = a.function_id "
        "WHERE f.domain = 'runtime' AND f.name = '" +
        function + "' AND a.rank = " + std::to_string(rank));
  };
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::int64_t ops = op_invocations.at(rank);
    EXPECT_EQ(calls_of(rank, "cudaMemcpy"), 3 * kIterations + 2 * ops) << "rank " << rank;
    EXPECT_EQ(calls_of(rank, "cudaStreamSynchronize"), ops) << "rank " << rank << ": one wait per op";
    EXPECT_EQ(calls_of(rank, "cudaMalloc"), 3) << "rank " << rank;
    // The C++ cudaMallocHost(T**, size) of cuda_runtime.h is a template that calls cudaHostAlloc.
    EXPECT_EQ(calls_of(rank, "cudaHostAlloc"), 2) << "rank " << rank;
    EXPECT_EQ(calls_of(rank, "cudaFree"), 3) << "rank " << rank;
    EXPECT_EQ(calls_of(rank, "cudaFreeHost"), 2) << "rank " << rank;
    // commlens's own time in these calls, from one call in 16 of each thread: the program's calls
    // are all on its main thread, so the estimate counts them to within 15.
    const std::int64_t api_calls =
        db.scalar("SELECT count(*) FROM cuda_api_calls WHERE rank = " + std::to_string(rank));
    const std::string own =
        "FROM profiler_overhead WHERE component = 'cuda_runtime_calls' AND rank = " + std::to_string(rank);
    EXPECT_LE(db.scalar("SELECT count " + own), api_calls) << "rank " << rank;
    EXPECT_GT(db.scalar("SELECT count " + own), api_calls - 16) << "rank " << rank;
    EXPECT_GT(db.scalar("SELECT time_ns " + own), 0) << "rank " << rank;
  }
  EXPECT_EQ(db.scalar("SELECT count(*) FROM (SELECT 1 FROM cuda_api_calls GROUP BY rank, correlation_id "
                      "HAVING count(*) > 1)"),
            0)
      << "a correlation id names one call";
  EXPECT_EQ(db.scalar("SELECT count(*) FROM cuda_copies c JOIN cuda_api_calls a ON a.rank = c.rank AND "
                      "a.correlation_id = c.correlation_id JOIN cuda_api_functions f ON f.id = a.function_id "
                      "WHERE f.name = 'cudaMemcpy' AND ((c.gpu_timed = 0 AND c.start_ns = a.start_ns AND "
                      "c.end_ns = a.end_ns) OR (c.gpu_timed = 1 AND c.start_ns >= a.start_ns))"),
            db.scalar("SELECT count(*) FROM cuda_copies"))
      << "every copy with the row of the call that made it";
}

// The same copies from the runtime's calls, CUPTI never attached: the same rows.
TEST_F(GpuProgram, StagedExchangeFromTheRuntimesCallsStoresTheSameCopies) {
  take_copies_from_calls();
  auto db = profile_example("staged_exchange from calls", "staged_exchange", 1);
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange (copies from the runtime's calls)");
  expect_staged_exchange(*db, op_invocations(), "staged_exchange from calls");
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_kernels"), 0) << "no kernel records without CUPTI";
  expect_staged_exchange_calls(*db, op_invocations());
}

// Summary mode stores a run of untimed copies as one row (collectors/cupti/copy_runs.hpp): the
// rows may be fewer, the copies and bytes they stand for are the program's, in and outside MPI calls.
TEST_F(GpuProgram, StagedExchangeFromTheRuntimesCallsInSummaryModeCountsEveryCopy) {
  take_copies_from_calls();
  profile_in_summary_mode();
  auto db = profile_example("staged_exchange summary from calls", "staged_exchange", 1);
  SKIP_WITHOUT_GPUS(db, 1, "staged_exchange (summary mode, copies from the runtime's calls)");
  const auto ops_per_rank = op_invocations();
  ASSERT_EQ(ops_per_rank.size(), 2u) << "the program did not report its op invocations";
  const auto totals = copies_per_path(*db);
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::int64_t ops = ops_per_rank.at(rank);
    EXPECT_EQ(totals_of(totals, rank, "host_staged"),
              (PathTotals{2 * kIterations + 2 * ops, 2 * kIterations * kBytes + 2 * ops * kReduceBytes}))
        << "rank " << rank;
    EXPECT_EQ(totals_of(totals, rank, "same_device"), (PathTotals{kIterations, kIterations * kBytes}))
        << "rank " << rank;
    EXPECT_EQ(db->scalar("SELECT sum(copies) FROM cuda_copies WHERE mpi_call_id IS NOT NULL AND rank = " +
                         std::to_string(rank)),
              2 * ops)
        << "rank " << rank << ": the op's copies, inside MPI_Reduce";
  }
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE copies > 1 AND gpu_timed = 1"), 0)
      << "only untimed copies make runs";
}

TEST_F(GpuProgram, PeerCopyFromTheRuntimesCallsStoresTheSameCopies) {
  take_copies_from_calls();
  auto db = profile_example("peer_copy from calls", "peer_copy", 2);
  SKIP_WITHOUT_GPUS(db, 2, "peer_copy (copies from the runtime's calls)");
  expect_peer_copy(*db, op_invocations());
}

TEST_F(GpuProgram, ManagedMigrationStoresEveryMigratedByteAsManagedOutsideMpi) {
  auto db = profile_example("managed_migration", "managed_migration", 1);
  SKIP_WITHOUT_GPUS(db, 1, "managed_migration (unified-memory migrations)");
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    for (const std::string direction : {"HtoD", "DtoH"}) {
      const std::string where =
          " FROM cuda_copies WHERE path = 'managed' AND copy_kind = '" + direction + "' AND rank = " + r;
      EXPECT_EQ(db->scalar("SELECT sum(bytes)" + where), kIterations * kBytes)
          << direction << " rank " << rank;
      EXPECT_GE(db->scalar("SELECT count(*)" + where), kIterations) << direction << " rank " << rank;
      std::cout << "managed_migration: rank " << rank << " " << direction << ": "
                << db->scalar("SELECT count(*)" + where) << " migration records\n";
    }
    EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path <> 'managed' AND rank = " + r), 0);
    EXPECT_EQ(db->scalar("SELECT count(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                         "JOIN buffer_locations b ON b.id = m.buffer_location WHERE f.name = 'MPI_Sendrecv' "
                         "AND b.name = 'managed' AND m.rank = " +
                         r),
              kIterations)
        << "rank " << rank << " sends from managed memory";
  }
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE mpi_call_id IS NOT NULL"), 0)
      << "migrations are not tied to MPI calls";
}

// What ipc_peer_copy's IPC part leaves, from CUPTI or from the runtime's calls alike.
void expect_ipc_copies(const Database& database) {
  const Database* db = &database;
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
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE mpi_call_id IS NOT NULL"), 0)
      << "every copy ran outside MPI calls";
}

TEST_F(GpuProgram, IpcPeerCopyStoresIpcCopiesWithTheirLinkAndEveryHandleOpen) {
  auto db = profile_example("ipc_peer_copy", "ipc_peer_copy", 2);
  SKIP_WITHOUT_GPUS(db, 2, "ipc_peer_copy (CUDA IPC and peer copies)");
  expect_ipc_copies(*db);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'ipc' AND link IS NULL"), 0)
      << "ipc copies between two GPUs name their link";
  const auto totals = copies_per_path(*db);
  // cudaMemcpyPeer without peer access: the driver's DtoH + HtoD through host memory.
  EXPECT_EQ(totals_of(totals, 0, "host_staged"), (PathTotals{2 * kIterations, 2 * kIterations * kBytes}));
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE rank = 0 AND copy_kind = 'DtoH'"),
            kIterations);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE rank = 0 AND copy_kind = 'HtoD'"),
            kIterations);
  EXPECT_EQ(totals_of(totals, 1, "host_staged"), PathTotals{});
  for (const Row& row :
       db->query("SELECT path, link, count(*) FROM cuda_copies WHERE link IS NOT NULL GROUP BY 1, 2")) {
    std::cout << "ipc_peer_copy: path " << *row[0].text << " link " << *row[1].text << ": " << row[2].as_int()
              << "\n";
  }
}

// From the calls, rank 0's cudaMemcpyPeer is what the program asked for: one peer copy each, where
// CUPTI sees the driver's two staged halves. The driver does not say which GPU memory mapped from
// another process is on, so those ipc copies name no link.
TEST_F(GpuProgram, IpcPeerCopyFromTheRuntimesCallsStoresIpcCopiesAndEveryHandleOpen) {
  take_copies_from_calls();
  auto db = profile_example("ipc_peer_copy from calls", "ipc_peer_copy", 2);
  SKIP_WITHOUT_GPUS(db, 2, "ipc_peer_copy (copies from the runtime's calls)");
  expect_ipc_copies(*db);
  const auto totals = copies_per_path(*db);
  EXPECT_EQ(totals_of(totals, 0, "peer"), (PathTotals{kIterations, kIterations * kBytes}));
  EXPECT_EQ(totals_of(totals, 0, "host_staged"), PathTotals{});
  EXPECT_EQ(totals_of(totals, 1, "peer"), PathTotals{});
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_copies WHERE path = 'ipc' AND link IS NOT NULL"), 0);
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
  // Each kernel carries the id of the nccl:AllReduce call that launched it (the NCCL collector's
  // call ids are pushed as external correlation ids like MPI calls').
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cuda_kernels k JOIN mpi_calls m ON m.id = k.mpi_call_id "
                       "JOIN functions f ON f.id = m.function_id "
                       "WHERE k.name LIKE '%AllReduce%' AND f.name = 'nccl:AllReduce'"),
            kRanksOnGpus * (kIterations + 1));
}

} // namespace
} // namespace commlens::integration
