// GPU test of the host's CUDA API calls (cuda_api_calls): api_calls (examples/cuda), whose header
// says exactly which launches, copies and synchronisations each rank makes.
#include "gpu_program.hpp"

namespace commlens::integration {
namespace {

constexpr int kLaunches = 7, kCopies = 5;

// One profiled run serves every test of the suite.
class ApiCalls : public ProfiledOnce<ApiCalls> {
public:
  std::unique_ptr<Database> run_profile() {
    return profile("api_calls", 1,
                   {cuda_example("api_calls"), std::to_string(kLaunches), std::to_string(kCopies)});
  }
};

// Rows of cuda_api_calls joined with their function (c.*, f.name, f.domain) on `rank`, matching `condition`.
std::int64_t api_calls(const Database& db, int rank, const std::string& condition) {
  return db.scalar("SELECT count(*) FROM cuda_api_calls c JOIN cuda_api_functions f ON f.id = c.function_id "
                   "WHERE c.rank = " +
                   std::to_string(rank) + " AND " + condition);
}

TEST_F(ApiCalls, EachRankHasExactlyItsRuntimeCalls) {
  SKIP_WITHOUT_GPUS(db_, 1, "api_calls (CUDA API calls)");
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    std::map<std::string, std::int64_t> calls;
    for (const Row& row :
         db_->query("SELECT f.name, count(*) FROM cuda_api_calls c JOIN cuda_api_functions f "
                    "ON f.id = c.function_id WHERE f.domain = 'runtime' AND c.rank = " +
                    std::to_string(rank) + " GROUP BY 1")) {
      calls[*row[0].text] = row[1].as_int();
    }
    EXPECT_EQ(calls,
              (std::map<std::string, std::int64_t>{
                  {"cudaLaunchKernel", kLaunches}, {"cudaMemcpy", kCopies}, {"cudaDeviceSynchronize", 1}}))
        << "rank " << rank;
    // Driver calls are recorded too, but only those the runtime calls made: each lies inside one.
    EXPECT_EQ(api_calls(*db_, rank,
                        "f.domain = 'driver' AND NOT EXISTS (SELECT 1 FROM cuda_api_calls r JOIN "
                        "cuda_api_functions g ON g.id = r.function_id WHERE g.domain = 'runtime' AND "
                        "r.rank = c.rank AND r.system_thread = c.system_thread AND r.start_ns <= c.start_ns "
                        "AND c.end_ns <= r.end_ns)"),
              0)
        << "rank " << rank;
    EXPECT_EQ(api_calls(*db_, rank, "c.thread IS NOT 0"), 0)
        << "rank " << rank << ": every call on the main thread, mpi_calls' thread 0";
    EXPECT_EQ(api_calls(*db_, rank, "c.end_ns < c.start_ns"), 0) << "rank " << rank;
  }
}

TEST_F(ApiCalls, EveryKernelAndCopyHasTheCallThatMadeItByCorrelationId) {
  SKIP_WITHOUT_GPUS(db_, 1, "api_calls (correlation ids)");
  for (int rank = 0; rank < kRanksOnGpus; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_kernels WHERE rank = " + r), kLaunches);
    EXPECT_EQ(api_calls(*db_, rank,
                        "f.name = 'cudaLaunchKernel' AND EXISTS (SELECT 1 FROM cuda_kernels k WHERE k.rank = "
                        "c.rank AND k.correlation_id = c.correlation_id AND k.start_ns >= c.start_ns)"),
              kLaunches)
        << "rank " << rank << ": each launch, before its kernel";
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_copies WHERE bytes = 4096 AND rank = " + r), kCopies);
    // A copy carries the id of the driver call that made it and of the runtime call around that.
    EXPECT_EQ(api_calls(*db_, rank,
                        "f.name = 'cudaMemcpy' AND EXISTS (SELECT 1 FROM cuda_copies k WHERE k.rank = c.rank "
                        "AND c.correlation_id IN (k.runtime_correlation_id, k.correlation_id) AND "
                        "k.start_ns >= c.start_ns)"),
              kCopies)
        << "rank " << rank;
    EXPECT_EQ(db_->scalar("SELECT count(*) FROM cuda_kernels k WHERE rank = " + r +
                          " AND NOT EXISTS (SELECT 1 FROM cuda_api_calls c WHERE c.rank = k.rank AND "
                          "c.correlation_id = k.correlation_id)"),
              0)
        << "rank " << rank << ": no kernel without its launch";
  }
}

} // namespace
} // namespace commlens::integration
