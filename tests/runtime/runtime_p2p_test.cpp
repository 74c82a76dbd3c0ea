// The runtime's device-buffer point-to-point (COMMLENS_RUNTIME_COLLECTIVES=p2p) against real Open
// MPI: tests/runtime/programs/p2p_check verifies every byte, status and error itself; these tests add what
// the trace must say (one ipc_rendezvous row per message the runtime sent or received as a
// rendezvous, exactly the ones p2p_check counted) and that host-only programs are profiled exactly
// as without the runtime. Without a GPU the GPU cases skip, naming what they skipped.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>

namespace commlens::integration {
namespace {

constexpr int kStressCalls = 150;
// A receive that went through the host while its sender's handle opened in the background.
constexpr const char* kFirstUse = "reason = 'first use of a peer''s buffer: the host path while its CUDA IPC "
                                  "handle opens in the background'";

struct Counted {
  std::int64_t sends = 0;
  std::int64_t receives = 0;
};

// "rank R: rendezvous_sends S rendezvous_receives V failures 0" lines, by rank.
std::map<int, Counted> counted_per_rank(const std::string& output) {
  std::map<int, Counted> counted;
  const std::regex line(R"(rank (\d+): rendezvous_sends (\d+) rendezvous_receives (\d+) failures 0)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator();
       ++it) {
    counted[std::stoi((*it)[1])] = {std::stoll((*it)[2]), std::stoll((*it)[3])};
  }
  return counted;
}

std::int64_t rows(const Database& db, int rank, const std::string& condition) {
  return db.scalar("SELECT count(*) FROM runtime_ops WHERE rank = " + std::to_string(rank) + " AND " +
                   condition);
}

// "reason: count; ..." of the rank's host-path rows, for failure messages.
std::string host_path_reasons(const Database& db, int rank) {
  std::string reasons;
  for (const auto& row : db.query("SELECT coalesce(reason, ''), count(*) FROM runtime_ops WHERE rank = " +
                                  std::to_string(rank) + " AND algorithm = 'host_staged' GROUP BY 1")) {
    reasons += row[0].text.value_or("") + ": " + std::to_string(row[1].as_int()) + "; ";
  }
  return reasons;
}

struct CheckedRun {
  JobResult job;
  std::unique_ptr<Database> db;
  std::map<int, Counted> counted;
};

CheckedRun run_check(const std::string& runtime_mode, int ranks, std::string* skip,
                     const std::map<std::string, std::string>& more_environment = {}) {
  CheckedRun run;
  *skip = cuda_tests::why_gpu_check_cannot_run(
      COMMLENS_CHECK_PROGRAM, 1, "the runtime point-to-point check with " + std::to_string(ranks) + " ranks");
  if (!skip->empty()) {
    return run;
  }
  std::map<std::string, std::string> environment = more_environment;
  environment.insert({{"COMMLENS_RUNTIME", runtime_mode}, {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,p2p"}});
  run.job = run_profiled_job({.command = {COMMLENS_CHECK_PROGRAM, std::to_string(kStressCalls)},
                              .mode = "trace",
                              .environment = environment,
                              .timeout_seconds = 400,
                              .ranks = ranks});
  std::cout << run.job.standard_output;
  EXPECT_EQ(run.job.exit_code, 0) << run.job.describe();
  EXPECT_NE(run.job.standard_output.find("p2p_check: ok"), std::string::npos) << run.job.describe();
  run.counted = counted_per_rank(run.job.standard_output);
  EXPECT_EQ(static_cast<int>(run.counted.size()), ranks) << run.job.describe();
  if (run.job.exit_code == 0) {
    run.db = std::make_unique<Database>(run.job.merged_database());
  }
  return run;
}

void expect_every_large_device_message_went_as_rendezvous(int ranks) {
  std::string skip;
  const CheckedRun run = run_check("on", ranks, &skip);
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  for (const auto& [rank, counted] : run.counted) {
    // A rank pairs with rank ^ 1; an unpaired last rank sends nothing.
    EXPECT_EQ(rows(db, rank, "algorithm = 'ipc_rendezvous'"), counted.sends + counted.receives)
        << "rank " << rank << ", host-path reasons: " << host_path_reasons(db, rank);
    EXPECT_EQ(rows(db, rank, "algorithm = 'ipc_rendezvous' AND bytes_peer = bytes AND bytes >= 65536"),
              counted.sends + counted.receives)
        << "rank " << rank;
    // Small and strided device messages took the host path, each with its reason.
    EXPECT_GT(rows(db, rank, "algorithm = 'host_staged' AND reason LIKE 'below 64 KiB%'"), 0)
        << "rank " << rank;
    EXPECT_EQ(rows(db, rank, "algorithm = 'host_staged' AND reason = 'non-contiguous datatype'"),
              rank % 2 == 0 ? 1 : 0)
        << "rank " << rank;
    // Each rank sent one 1000-byte and one LARGE message in each other send mode (p2p_check's
    // section 13): the runtime took every one, the large one as a rendezvous.
    for (const std::string function :
         {"MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Irsend", "MPI_Bsend", "MPI_Ibsend"}) {
      const std::string is_function =
          " AND function_id = (SELECT id FROM functions WHERE name = '" + function + "')";
      EXPECT_EQ(rows(db, rank, "algorithm = 'ipc_rendezvous'" + is_function), 1)
          << "rank " << rank << " " << function;
      EXPECT_EQ(rows(db, rank, "algorithm = 'host_staged' AND bytes = 1000" + is_function), 1)
          << "rank " << rank << " " << function;
    }
    // And the starts of a persistent send in each mode and size (section 14), each staged through
    // the host: three (MPI_Start twice, then MPI_Startall) for the standard, synchronous and ready
    // modes, one (MPI_Start) for the buffered mode.
    for (const auto& [function, starts] :
         {std::pair<std::string, int>{"MPI_Start", 14}, {"MPI_Startall", 6}}) {
      EXPECT_EQ(rows(db, rank,
                     "algorithm = 'host_staged' AND reason = 'persistent send: the host path' AND bytes_host "
                     "= bytes "
                     "AND function_id = (SELECT id FROM functions WHERE name = '" +
                         function + "')"),
                starts)
          << "rank " << rank << " " << function;
    }
    // mpi_calls says which implementation ran each call, as runtime_ops does.
    EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls c JOIN functions f ON f.id = c.function_id "
                        "JOIN implementations i ON i.id = c.implementation WHERE c.rank = " +
                        std::to_string(rank) +
                        " AND f.name = 'MPI_Send' AND i.name = 'runtime:ipc_rendezvous'"),
              rows(db, rank,
                   "algorithm = 'ipc_rendezvous' AND function_id = (SELECT id FROM functions WHERE name = "
                   "'MPI_Send')"))
        << "rank " << rank;
  }
}

TEST(RuntimePointToPoint, TwoRanksSharingAGpuSendEveryLargeDeviceMessageAsARendezvous) {
  expect_every_large_device_message_went_as_rendezvous(2);
}

TEST(RuntimePointToPoint, FourRanksSendEveryLargeDeviceMessageAsARendezvous) {
  expect_every_large_device_message_went_as_rendezvous(4);
}

TEST(RuntimePointToPoint, AbModeAlternatesRendezvousAndHostPathWithCorrectData) {
  std::string skip;
  const CheckedRun run = run_check("ab", 2, &skip);
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT(rows(*run.db, rank, "decision = 'ab_baseline'"), 0) << "rank " << rank;
    EXPECT_GT(rows(*run.db, rank, "algorithm = 'ipc_rendezvous'"), 0) << "rank " << rank;
  }
}

// COMMLENS_RUNTIME_HOST_PERCENT=25 stripes rendezvous messages of 16 MiB and up (the shipped
// tables' min_bytes) that a waiting receiver claims while their sender waits, between ranks
// sharing a GPU too: p2p_check's 64 MiB messages to a receiver already in MPI_Recv (its section
// 12) arrive intact with a quarter of their bytes through the sender's ring, the rows say so
// exactly, and the run table says what striping did. Which messages stripe depends on timing (a
// receiver that claims after the sender's patience gets the plain path; the first from each
// sender does, while the receiver pins the sender's ring): 1 to 3 of each rank's 4 receives did
// on the H100 with 8 messages, so there are 16.
TEST(RuntimePointToPoint, StripedMessagesCarryTheForcedHostShareAndArriveIntact) {
  std::string skip;
  const CheckedRun run = run_check("on", 2, &skip, {{"COMMLENS_RUNTIME_HOST_PERCENT", "25"}});
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  const auto found = db.query("SELECT value FROM run WHERE key = 'runtime_p2p_striping'");
  const std::string summary = found.empty() ? "(none)" : found[0][0].text.value_or("");
  std::cout << "runtime_p2p_striping: " << summary << "\n";
  EXPECT_TRUE(summary.starts_with("25% over the host path from 16777216 B (COMMLENS_RUNTIME_HOST_PERCENT"))
      << summary;
  const std::string striped = "algorithm = 'ipc_rendezvous_striped'";
  const std::string receive = "function_id IN (SELECT id FROM functions WHERE name IN ('MPI_Recv', "
                              "'MPI_Irecv', 'MPI_Sendrecv', 'MPI_Mrecv', 'MPI_Imrecv', 'MPI_Recv_init'))";
  for (const auto& [rank, counted] : run.counted) {
    EXPECT_EQ(rows(db, rank, "algorithm LIKE 'ipc_rendezvous%'"), counted.sends + counted.receives)
        << "rank " << rank << ", host-path reasons: " << host_path_reasons(db, rank);
    const std::int64_t striped_rows = rows(db, rank, striped);
    std::cout << "rank " << rank << ": " << striped_rows << " striped rows, "
              << rows(db, rank, striped + " AND " + receive) << " of them receives\n";
    EXPECT_GT(rows(db, rank, striped + " AND " + receive), 0) << "rank " << rank;
    EXPECT_GT(
        rows(db, rank, striped + " AND function_id = (SELECT id FROM functions WHERE name = 'MPI_Send')"), 0)
        << "rank " << rank << ": a blocking send's row says it was striped";
    // Exactly a quarter, rounded down to 4 KiB, over the host path; the rest as the peer copy.
    EXPECT_EQ(rows(db, rank,
                   striped + " AND bytes >= 16777216 AND bytes_host = bytes * 25 / 100 / 4096 * 4096 AND "
                             "bytes_peer = bytes - bytes_host"),
              striped_rows)
        << "rank " << rank;
    // A receive's row counts the ring's 4 MiB chunks beside the one peer copy, on two streams.
    EXPECT_EQ(rows(db, rank,
                   striped + " AND " + receive +
                       " AND streams = 2 AND chunks = 1 + (bytes_host + 4194303) / 4194304"),
              rows(db, rank, striped + " AND " + receive))
        << "rank " << rank;
  }
}

// COMMLENS_RUNTIME_BACKGROUND_OPENS=1 (the Dynamic copy-type selection of "Design considerations for
// GPU-aware collective communications in MPI" (Faraji and Afsahi)): a receiver whose sender waits, and whose
// mapping of the sender's buffer would take longer than the host path (before its first open, a typical
// open's 2.3 ms; then this process's mean), takes that message through the host while the cache's worker
// opens the handle. p2p_check allocates a buffer per message, so its first rendezvous receive at least is
// such a first use. Every byte still arrives (p2p_check), each such receive says so in its row, and every
// other rendezvous used the peer copy.
TEST(RuntimePointToPoint, FirstUsesGoThroughTheHostWhileTheirHandlesOpenInTheBackground) {
  std::string skip;
  const CheckedRun run = run_check("on", 2, &skip, {{"COMMLENS_RUNTIME_BACKGROUND_OPENS", "1"}});
  if (!skip.empty()) {
    GTEST_SKIP() << skip;
  }
  ASSERT_TRUE(run.db);
  const Database& db = *run.db;
  const std::string first_use = std::string("algorithm = 'ipc_rendezvous' AND ") + kFirstUse;
  std::int64_t first_uses = 0;
  for (const auto& [rank, counted] : run.counted) {
    EXPECT_EQ(rows(db, rank, "algorithm = 'ipc_rendezvous'"), counted.sends + counted.receives)
        << "rank " << rank << ", host-path reasons: " << host_path_reasons(db, rank);
    const std::int64_t through_host = rows(db, rank, first_use);
    std::cout << "rank " << rank << ": " << through_host << " first-use receives through the host\n";
    EXPECT_EQ(rows(db, rank, first_use + " AND bytes_host = bytes AND bytes_peer = 0"), through_host)
        << "rank " << rank;
    EXPECT_EQ(rows(db, rank, "algorithm = 'ipc_rendezvous' AND bytes_peer = bytes"),
              counted.sends + counted.receives - through_host)
        << "rank " << rank;
    first_uses += through_host;
  }
  EXPECT_GT(first_uses, 0);
  // The worker's opens are counted in the run table (rank 0's, in the merged file).
  const auto cache = db.query("SELECT value FROM run WHERE key = 'runtime_ipc_cache'");
  ASSERT_FALSE(cache.empty());
  const std::string cache_summary = cache[0][0].text.value_or("");
  std::cout << "runtime_ipc_cache: " << cache_summary << "\n";
  if (rows(db, 0, first_use) > 0) {
    EXPECT_EQ(cache_summary.find("background_opens=0"), std::string::npos) << cache_summary;
  }
}

// tests/runtime/programs/first_use_check p2p with COMMLENS_RUNTIME_BACKGROUND_OPENS=1: per size and round
// (warm-up, timed), a first message from rank 0 to a waiting rank 1 on fresh buffers, then a second
// on the same buffers after a pause. A small first use goes through the host while the worker opens
// rank 0's handle, and the second message finds it mapped (a peer copy, no open); a large one,
// whose host path would take longer than an open, opens the handle itself.
TEST(RuntimePointToPoint, SmallFirstUsesGoThroughTheHostAndTheNextMessageFindsTheHandleOpen) {
  if (const std::string skip = cuda_tests::why_gpu_check_cannot_run(COMMLENS_FIRST_USE_PROGRAM, 1,
                                                                    "the point-to-point first-use check");
      !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  const JobResult job = run_profiled_job({.command = {COMMLENS_FIRST_USE_PROGRAM, "p2p", "65536", "67108864"},
                                          .mode = "trace",
                                          .environment = {{"COMMLENS_RUNTIME", "on"},
                                                          {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,p2p"},
                                                          {"COMMLENS_RUNTIME_BACKGROUND_OPENS", "1"}},
                                          .timeout_seconds = 300,
                                          .ranks = 2});
  std::cout << job.standard_output;
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  ASSERT_NE(job.standard_output.find("first_use_check: ok"), std::string::npos) << job.describe();
  const Database db(job.merged_database());
  // Rank 1 only receives: its rows of one size, in order, as "host" (a first use through the host)
  // or "peer" (the peer copy), with " opened" when the receive had to open a handle.
  const auto receives = [&](std::uint64_t bytes) {
    std::vector<std::string> seen;
    for (const auto& row : db.query(std::string("SELECT bytes_host = bytes AND ") + kFirstUse +
                                    ", bytes_peer = bytes, ipc_opens FROM runtime_ops WHERE rank = 1 AND "
                                    "algorithm = 'ipc_rendezvous' AND bytes = " +
                                    std::to_string(bytes) + " ORDER BY start_ns")) {
      seen.push_back(std::string(row[0].as_int()   ? "host"
                                 : row[1].as_int() ? "peer"
                                                   : "neither") +
                     (row[2].as_int() > 0 ? " opened" : ""));
    }
    return seen;
  };
  EXPECT_EQ(receives(65536), (std::vector<std::string>{"host", "peer", "host", "peer"}));
  EXPECT_EQ(receives(67108864), (std::vector<std::string>{"peer opened", "peer", "peer opened", "peer"}));
}

// Per rank and function: calls and bytes, Testsome left out (its count varies between runs).
std::vector<std::vector<std::int64_t>> call_totals(const Database& db) {
  std::vector<std::vector<std::int64_t>> totals;
  for (const auto& row :
       db.query("SELECT c.rank, f.name, count(*), sum(c.bytes_sent), sum(c.bytes_recv) FROM mpi_calls c "
                "JOIN functions f ON f.id = c.function_id WHERE f.name <> 'MPI_Testsome' "
                "GROUP BY c.rank, f.name ORDER BY c.rank, f.name")) {
    totals.push_back({row[0].as_int(),
                      static_cast<std::int64_t>(std::hash<std::string>{}(row[1].text.value_or(""))),
                      row[2].as_int(), row[3].as_int(), row[4].as_int()});
  }
  return totals;
}

// The runtime channel is opened and closed at MPI_Init and MPI_Finalize on every rank, GPU or not;
// host-buffer programs (on a GPU machine, every receive now passes the runtime's header check) must
// record exactly what they record without the runtime.
TEST(RuntimePointToPoint, HostBufferProgramsAreProfiledExactlyAsWithoutTheRuntime) {
  const std::vector<std::string> command = {example_program("nonblocking_mix"), "20"};
  const JobResult plain = run_profiled_job({.command = command, .mode = "trace"});
  const JobResult with_p2p = run_profiled_job(
      {.command = command,
       .mode = "trace",
       .environment = {{"COMMLENS_RUNTIME", "on"}, {"COMMLENS_RUNTIME_COLLECTIVES", "allreduce,p2p"}}});
  ASSERT_EQ(plain.exit_code, 0) << plain.describe();
  ASSERT_EQ(with_p2p.exit_code, 0) << with_p2p.describe();
  const Database plain_db(plain.merged_database());
  const Database p2p_db(with_p2p.merged_database());
  const auto expected = call_totals(plain_db);
  ASSERT_GT(expected.size(), 8u);
  EXPECT_EQ(call_totals(p2p_db), expected);
  EXPECT_EQ(p2p_db.scalar("SELECT count(*) FROM runtime_ops"), 0);
}

} // namespace
} // namespace commlens::integration
