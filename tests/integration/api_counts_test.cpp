// api_counts: calls that move no data (rank queries, datatype, info, attribute, group, topology and
// environment calls, MPI_Init and MPI_Finalize) are counted exactly; MPI_Wtime is not wrapped.
// Expected values mirror the pattern documented in examples/api_counts.c.
#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kRounds = 250;

CallTable documented_counts() {
  const std::map<std::string, int> per_rank = {{"MPI_Init", 1},
                                               {"MPI_Comm_rank", kRounds},
                                               {"MPI_Comm_size", kRounds + 1},
                                               {"MPI_Type_contiguous", kRounds},
                                               {"MPI_Type_commit", kRounds + 1},
                                               {"MPI_Type_size", kRounds},
                                               {"MPI_Type_free", kRounds + 1},
                                               {"MPI_Type_vector", 1},
                                               {"MPI_Info_create", kRounds},
                                               {"MPI_Info_set", kRounds},
                                               {"MPI_Info_free", kRounds},
                                               {"MPI_Comm_get_attr", kRounds},
                                               {"MPI_Comm_group", kRounds},
                                               {"MPI_Group_size", kRounds},
                                               {"MPI_Group_free", kRounds},
                                               {"MPI_Dims_create", 1},
                                               {"MPI_Cart_create", 1},
                                               {"MPI_Cart_shift", 1},
                                               {"MPI_Comm_free", 1},
                                               {"MPI_Get_processor_name", 1},
                                               {"MPI_Initialized", 1},
                                               {"MPI_Query_thread", 1},
                                               {"MPI_Error_string", 1},
                                               {"MPI_Barrier", 1},
                                               {"MPI_Finalize", 1}};
  CallTable expected;
  for (int r = 0; r < kRanks; ++r)
    for (const auto& [function, count] : per_rank)
      expected.add(r, function, kNoCommunicator, kNoPeer, 0, 0, count);
  return expected;
}

class ApiCounts : public ProfiledExample {
protected:
  const JobResult& run() const { return job({example_program("api_counts"), std::to_string(kRounds)}); }
};

TEST_P(ApiCounts, CountsEveryCallOfTheProgramExactlyAndNothingElse) {
  auto db = merged(run());
  if (!db)
    return;
  EXPECT_EQ(count_difference(documented_counts(), read_call_stats(*db)), "")
      << "call_stats (right) differs from the calls api_counts.c makes (left)";
  if (trace()) {
    EXPECT_EQ(count_difference(documented_counts(), read_traced_calls(*db)), "")
        << "mpi_calls (right) differs from the calls api_counts.c makes (left)";
  }
}

TEST_P(ApiCounts, LeavesMpiWtimeUnwrapped) {
  auto db = merged(run());
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM functions WHERE name IN ('MPI_Wtime', 'MPI_Wtick')"), 0);
}

TEST_P(ApiCounts, StoresMpiInitAndFinalizeWithTheirDurations) {
  auto db = merged(run());
  if (!db)
    return;
  for (const char* function : {"MPI_Init", "MPI_Finalize"}) {
    EXPECT_EQ(db->scalar("SELECT count(*) FROM call_stats c JOIN functions f ON f.id = c.function_id WHERE "
                         "f.name = '" +
                         std::string(function) + "' AND c.count = 1 AND c.time_min_ns > 0"),
              kRanks)
        << function << ": one call with a duration on every rank";
  }
  if (trace()) {
    EXPECT_EQ(db->scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                         "WHERE f.name = 'MPI_Init' AND c.end_ns > c.start_ns AND c.start_ns = "
                         "(SELECT min(start_ns) FROM mpi_calls WHERE rank = c.rank)"),
              kRanks)
        << "MPI_Init is every rank's first call, with a duration";
  }
}

COMMLENS_IN_BOTH_MODES(ApiCounts);

} // namespace
} // namespace commlens::integration
