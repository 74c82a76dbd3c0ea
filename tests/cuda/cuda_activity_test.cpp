// GPU tests of the activity beside copies: memsets, synchronisation calls, the application's own
// NVTX ranges and buffer locations, from staged_exchange (examples/cuda), whose header says exactly
// which of each it makes, and where.
#include "gpu_program.hpp"

namespace commlens::integration {
namespace {

// One profiled run serves every test of the suite.
class StagedExchangeActivity : public ProfiledOnce<StagedExchangeActivity> {
public:
  std::unique_ptr<Database> run_profile() {
    auto db = profile_example("staged_exchange", "staged_exchange", 1);
    ops_ = op_invocations();
    return db;
  }

protected:
  static inline std::map<int, std::int64_t> ops_;
};

TEST_F(StagedExchangeActivity, MemsetsAreStoredWithTheirBytesValueAndMpiCall) {
  SKIP_WITHOUT_GPUS(db_, 1, "staged_exchange (memsets)");
  ASSERT_EQ(ops_.size(), 2u) << "the program did not report its op invocations";
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_memsets WHERE rank = " + r), 1 + ops_.at(rank));
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_memsets WHERE mpi_call_id IS NULL AND bytes = " +
                          std::to_string(kBytes) + " AND (value & 255) = " + std::to_string(rank + 1) +
                          " AND memory_kind = 'device' AND rank = " + r),
              1)
        << "rank " << rank << ": the send buffer's cudaMemset, outside MPI (its byte, whether or not the "
        << "driver widened it to a 32-bit pattern)";
    EXPECT_EQ(rows_inside(*db_, "cuda_memsets", "MPI_Reduce", rank,
                          "c.bytes = " + std::to_string(kReduceBytes) + " AND c.value = 0"),
              ops_.at(rank))
        << "rank " << rank << ": one per op invocation, inside its MPI_Reduce";
  }
}

TEST_F(StagedExchangeActivity, StreamSynchronizationsAreStoredInsideTheirMpiCall) {
  SKIP_WITHOUT_GPUS(db_, 1, "staged_exchange (synchronisations)");
  ASSERT_EQ(ops_.size(), 2u) << "the program did not report its op invocations";
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    for (const Row& row : db_->query("SELECT kind, count(*) FROM cuda_synchronizations WHERE rank = " + r +
                                     " GROUP BY kind")) {
      std::cout << "staged_exchange: rank " << rank << " " << *row[0].text << ": " << row[1].as_int() << "\n";
    }
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_synchronizations WHERE rank = " + r), ops_.at(rank));
    EXPECT_EQ(rows_inside(*db_, "cuda_synchronizations", "MPI_Reduce", rank,
                          "c.kind = 'stream_synchronize' AND c.stream IS NOT NULL AND c.event IS NULL"),
              ops_.at(rank))
        << "rank " << rank;
  }
}

TEST_F(StagedExchangeActivity, TheApplicationsNvtxRangesAreStoredByNameAroundTheirMpiCalls) {
  SKIP_WITHOUT_GPUS(db_, 1, "staged_exchange (NVTX ranges)");
  EXPECT_EQ(db_->scalar("SELECT count(*) FROM run WHERE key = 'nvtx_user_ranges' AND value = 'on'"), 1);
  EXPECT_EQ(db_->scalar("SELECT count(*) FROM nvtx_ranges WHERE domain = 'MPI'"), 0)
      << "commlens' own ranges are mpi_calls, not nvtx_ranges";
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM nvtx_ranges WHERE rank = " + r), kIterations + 1);
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM nvtx_ranges WHERE name = 'exchange' AND domain IS NULL AND "
                          "end_ns > start_ns AND rank = " +
                          r),
              kIterations);
    const std::string inside = "SELECT count(*) FROM nvtx_ranges n JOIN mpi_calls m ON m.rank = n.rank "
                               "JOIN functions f ON f.id = m.function_id WHERE m.start_ns >= n.start_ns "
                               "AND m.end_ns <= n.end_ns AND n.rank = " +
                               r;
    EXPECT_EQ(db_->scalar(inside + " AND n.name = 'exchange' AND f.name = 'MPI_Sendrecv'"), kIterations)
        << "rank " << rank << ": each exchange range holds one MPI_Sendrecv";
    EXPECT_EQ(db_->scalar(inside + " AND n.name = 'exchange' AND f.name <> 'MPI_Sendrecv'"), 0);
    EXPECT_EQ(db_->scalar(inside + " AND n.name = 'reduce' AND f.name = 'MPI_Reduce'"), kIterations)
        << "rank " << rank << ": the reduce range holds every MPI_Reduce";
  }
}

TEST_F(StagedExchangeActivity, MpiCallsOnPinnedHostBuffersAreLocatedOnTheHost) {
  SKIP_WITHOUT_GPUS(db_, 1, "staged_exchange (buffer locations)");
  EXPECT_EQ(db_->scalar("SELECT count(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                        "JOIN buffer_locations b ON b.id = m.buffer_location "
                        "WHERE f.name = 'MPI_Sendrecv' AND b.name = 'host'"),
            kRanksOnGpus * kIterations);
}

} // namespace
} // namespace commlens::integration
