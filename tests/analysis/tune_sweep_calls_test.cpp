// What `commlens tune` takes from a sweep's database (cli/tune/sweep_calls.hpp): the runtime's own
// calls of the swept function after the warm-up, without IPC opens; nothing else.
#include "test_database.hpp"
#include "tune/sweep_calls.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

namespace {

using commlens::runtime::tuning::CandidateCall;
using commlens::test::make_temp_directory;
using commlens::test::TestDatabase;

// mpi_calls' id: rank << 46 | thread << 36 | sequence (libprofiler/src/schema.cpp).
constexpr long long call_id(int rank, int sequence) {
  return (static_cast<long long>(rank) << 46) | sequence;
}

auto as_tuple(const CandidateCall& call) {
  return std::make_tuple(call.bytes, call.rank, call.candidate, call.duration_ns);
}

TEST(TuneSweepCalls, TakesTheRuntimesCallsAfterTheWarmUpWithoutIpcOpens) {
  const auto path = make_temp_directory("commlens-tune-calls") / "commlens.sqlite";
  {
    TestDatabase database(path);
    database.execute(R"sql(
INSERT INTO functions (id, name, family) VALUES (4, 'MPI_Allreduce', 'collective'), (5, 'MPI_Bcast', 'collective');
INSERT OR IGNORE INTO implementations VALUES (1, 'mpi:host_staged'), (2, 'runtime:two_shot'), (3, 'runtime:one_shot');
)sql");
    // (rank, sequence, function, phase, algorithm, decision, ipc_opens, duration)
    const std::tuple<int, int, int, int, const char*, const char*, int, int> calls[] = {
        {0, 1, 4, 0, "one_shot", "runtime", 0, 74000},    // warm-up
        {0, 2, 4, 0, "two_shot", "runtime", 0, 55000},    // warm-up
        {0, 3, 4, 1, "one_shot", "runtime", 0, 28000},    // measured
        {0, 4, 4, 1, "two_shot", "runtime", 1, 2300000},  // opened a mapping
        {0, 5, 4, 1, "pmpi", "fallback", 0, 9000},        // not the runtime's choice
        {0, 6, 5, 1, "tree", "runtime", 0, 12000},        // another function
        {1, 1, 4, 0, "one_shot", "runtime", 0, 70000},    // warm-up
        {1, 2, 4, 2, "host_staged", "runtime", 0, 41000}, // measured, a later phase
        {1, 3, 4, 2, "two_shot", "runtime", 0, 31000}};   // measured
    for (const auto& [rank, sequence, function, phase, algorithm, decision, opens, duration] : calls) {
      const long long id = call_id(rank, sequence);
      database.execute("INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, "
                       "bytes_recv, peer, comm_id, request_id, phase) VALUES (" +
                       std::to_string(id) + ", " + std::to_string(rank) + ", 0, " + std::to_string(function) +
                       ", 0, " + std::to_string(duration) + ", 4096, 4096, -1, 0, " + std::to_string(id) +
                       ", " + std::to_string(phase) + ")");
      database.execute(
          "INSERT INTO runtime_ops (rank, mpi_call_id, function_id, comm_id, start_ns, end_ns, "
          "implementation, algorithm, decision, bytes, bytes_peer, bytes_host, ipc_opens, chunks, "
          "streams) VALUES (" +
          std::to_string(rank) + ", " + std::to_string(id) + ", " + std::to_string(function) + ", 0, 1000, " +
          std::to_string(1000 + duration) + ", 3, '" + algorithm + "', '" + decision + "', 4096, 0, 0, " +
          std::to_string(opens) + ", 1, 1)");
    }
  }
  std::vector<CandidateCall> calls = commlens::cli::read_calls(path, "MPI_Allreduce");
  std::ranges::sort(calls, {}, [](const CandidateCall& call) { return as_tuple(call); });
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(as_tuple(calls[0]), std::make_tuple(4096ull, 0ll, std::string("one_shot"), 28000ll));
  EXPECT_EQ(as_tuple(calls[1]), std::make_tuple(4096ull, 1ll, std::string("host_staged"), 41000ll));
  EXPECT_EQ(as_tuple(calls[2]), std::make_tuple(4096ull, 1ll, std::string("two_shot"), 31000ll));
  EXPECT_TRUE(commlens::cli::read_calls(path, "MPI_Reduce").empty());
}

} // namespace
