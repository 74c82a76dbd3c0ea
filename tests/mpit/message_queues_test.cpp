// The MPI_T collector against real Open MPI: examples/message_queues fills the receivers' (odd
// ranks') unexpected queue, then their posted queue, 64 messages each, from the even rank before.
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace commlens::integration {
namespace {

constexpr int kMessages = 64;

// One job per configuration for the whole executable.
const JobResult& run_cached(const std::string& key, const JobSpec& spec) {
  static std::map<std::string, JobResult> jobs;
  auto found = jobs.find(key);
  if (found == jobs.end())
    found = jobs.emplace(key, run_profiled_job(spec)).first;
  return found->second;
}

// MPI_Init, pvars sampled at MPI_Barrier's entry and exit (the program's only sync points).
const JobResult& single_at_barriers() {
  return run_cached("single",
                    {.command = {example_program("message_queues"), "single", std::to_string(kMessages)},
                     .mode = "trace",
                     .environment = {{"COMMLENS_PVAR_CALLS", "MPI_Barrier"}}});
}

constexpr int kPeriodMs = 20;

// MPI_THREAD_MULTIPLE, a 20 ms period checked at every call exit (no COMMLENS_PVAR_CALLS).
const JobResult& multiple_every_period() {
  return run_cached("multiple",
                    {.command = {example_program("message_queues"), "multiple", std::to_string(kMessages)},
                     .mode = "trace",
                     .environment = {{"COMMLENS_PVAR_PERIOD_MS", std::to_string(kPeriodMs)}}});
}

// Four threads per rank calling MPI at once: the period's samples race for one slot.
const JobResult& four_threads_every_period() {
  return run_cached("threads", {.command = {example_program("thread_multiple"), "400"},
                                .mode = "trace",
                                .environment = {{"COMMLENS_PVAR_PERIOD_MS", "1"}}});
}

constexpr const char* kSamplingMode = "at call exits, once per period, and COMMLENS_PVAR_CALLS boundaries";

std::unique_ptr<Database> open_merged(const JobResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  if (result.exit_code != 0 || !std::filesystem::exists(result.merged_database()))
    return nullptr;
  return std::make_unique<Database>(result.merged_database());
}

std::string run_value(const Database& db, const std::string& key) {
  const auto rows = db.query("SELECT value FROM run WHERE key = '" + key + "'");
  return rows.empty() || !rows[0][0].text ? "" : *rows[0][0].text;
}

// Largest value of `pvar` on `rank` for the element of peer `element` (its rank in MPI_COMM_WORLD),
// among samples with the given trigger (-1: any).
std::int64_t max_sample(const Database& db, const std::string& pvar, int rank, int element,
                        int trigger = -1) {
  return db.scalar(
      "SELECT max(s.value) FROM pvar_samples s JOIN pvars p ON p.id = s.pvar_id WHERE p.name = '" + pvar +
      "' AND s.rank = " + std::to_string(rank) + " AND s.comm_id = 0 AND s.element = " +
      std::to_string(element) + (trigger >= 0 ? " AND s.trigger = " + std::to_string(trigger) : ""));
}

TEST(MessageQueues, SendsBeforeReceivesShowInTheReceiversUnexpectedQueue) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  for (int receiver : {1, 3}) {
    const std::int64_t queued = max_sample(*db, "pml_ob1_unexpected_msgq_length", receiver, receiver - 1);
    EXPECT_GT(queued, 0) << "rank " << receiver;
    EXPECT_LE(queued, kMessages) << "rank " << receiver;
  }
}

TEST(MessageQueues, PrepostedReceivesShowInThePostedQueue) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  for (int receiver : {1, 3})
    EXPECT_EQ(max_sample(*db, "pml_ob1_posted_recvq_length", receiver, receiver - 1), kMessages)
        << "rank " << receiver;
  // The senders never post a receive of their own for the receivers' traffic.
  EXPECT_EQ(max_sample(*db, "pml_ob1_posted_recvq_length", 0, 1), 0);
}

TEST(MessageQueues, SamplesAtCallBoundariesAndRecordsTheMode) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  EXPECT_EQ(run_value(*db, "mpit_sampling"), kSamplingMode);
  // Every boundary sample names a call that is in mpi_calls (trace mode), and it is an MPI_Barrier
  // for entry/exit samples.
  EXPECT_GT(db->scalar("SELECT count(*) FROM pvar_samples WHERE trigger IN (1, 2)"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_samples s LEFT JOIN mpi_calls c ON c.id = s.call_id "
                       "LEFT JOIN functions f ON f.id = c.function_id "
                       "WHERE s.trigger IN (1, 2) AND (f.name IS NULL OR f.name <> 'MPI_Barrier')"),
            0);
}

// Calls at whose exit a period sample was read: their count on `rank` and the smallest gap between
// the end times of consecutive ones (0 when fewer than two).
struct PeriodCalls {
  std::int64_t count = 0, smallest_gap_ns = 0;
};
PeriodCalls period_calls(const Database& db, int rank) {
  const std::string calls =
      "SELECT DISTINCT c.end_ns FROM pvar_samples s JOIN mpi_calls c ON c.id = s.call_id "
      "WHERE s.trigger = 0 AND s.rank = " +
      std::to_string(rank);
  return {db.scalar("SELECT count(*) FROM (" + calls + ")"),
          db.scalar("SELECT coalesce(min(gap), 0) FROM (SELECT end_ns - lag(end_ns) OVER (ORDER BY end_ns) "
                    "AS gap FROM (" +
                    calls + "))")};
}

TEST(MessageQueues, UnderThreadMultiplePeriodSamplesAreReadAtCallExitsAtMostOncePerPeriod) {
  auto db = open_merged(multiple_every_period());
  if (!db)
    return;
  EXPECT_EQ(run_value(*db, "mpit_sampling"), kSamplingMode);
  // Every period sample names the traced call at whose exit it was read.
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_samples s LEFT JOIN mpi_calls c ON c.id = s.call_id "
                       "WHERE s.trigger = 0 AND c.id IS NULL"),
            0);
  for (int rank = 0; rank < kRanks; ++rank) {
    // Each rank's calls span two 300 ms sleeps (its own or its partner's).
    const PeriodCalls calls = period_calls(*db, rank);
    EXPECT_GE(calls.count, 2) << "rank " << rank;
    // The next read is due one period after the exit that sampled (1 us for the tick conversion).
    EXPECT_GE(calls.smallest_gap_ns, kPeriodMs * 1'000'000 - 1'000) << "rank " << rank;
  }
  // The first MPI_Recv after the receiver's sleep (due: the sleep outlasts the period) returns with
  // the sender's other messages queued.
  for (int receiver : {1, 3}) {
    const std::int64_t queued = max_sample(*db, "pml_ob1_unexpected_msgq_length", receiver, receiver - 1, 0);
    EXPECT_GT(queued, 0) << "rank " << receiver;
    EXPECT_LE(queued, kMessages) << "rank " << receiver;
  }
}

TEST(MessageQueues, AmongFourThreadsCallingMpiOnlyOneReadsThePvarsPerPeriod) {
  auto db = open_merged(four_threads_every_period());
  if (!db)
    return;
  for (int rank = 0; rank < kRanks; ++rank) {
    const PeriodCalls calls = period_calls(*db, rank);
    EXPECT_GE(calls.count, 2) << "rank " << rank;
    EXPECT_GE(calls.smallest_gap_ns, 1'000'000 - 1'000) << "rank " << rank;
  }
  // Samples came from more than one thread (the exits that found the period due).
  EXPECT_GT(db->scalar("SELECT count(DISTINCT c.thread) FROM pvar_samples s JOIN mpi_calls c ON c.id = "
                       "s.call_id WHERE s.trigger = 0"),
            1);
}

TEST(MessageQueues, CatalogueDescribesTheOb1QueuePvarsAsCommunicatorBoundSizes) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  for (const char* name : {"pml_ob1_unexpected_msgq_length", "pml_ob1_posted_recvq_length"}) {
    const auto rows =
        db->query(std::string("SELECT class, binding, selected FROM pvars WHERE name = '") + name + "'");
    ASSERT_EQ(rows.size(), 1u) << name;
    EXPECT_EQ(rows[0][0].text.value_or(""), "size");
    EXPECT_EQ(rows[0][1].text.value_or(""), "communicator");
    EXPECT_EQ(rows[0][2].as_int(), 1);
  }
  // One handle per pvar and rank on MPI_COMM_WORLD, one element per peer, freed at MPI_Finalize.
  EXPECT_EQ(db->scalar(
                "SELECT count(*) FROM pvar_handles WHERE status = 'sampled' AND comm_id = 0 AND elements = " +
                std::to_string(kRanks) + " AND freed_ns IS NOT NULL"),
            2 * kRanks);
}

TEST(MessageQueues, CvarSnapshotHoldsOpenMpiControlVariablesOnEveryRank) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string where = " WHERE rank = " + std::to_string(rank);
    EXPECT_GT(db->scalar("SELECT count(*) FROM cvars" + where), 500);
    EXPECT_EQ(
        db->scalar("SELECT count(*) FROM cvars" + where +
                   " AND name IN ('btl_vader_eager_limit', 'pml_ob1_free_list_num', 'mpi_param_check')"),
        3);
  }
  EXPECT_EQ(db->scalar(
                "SELECT CAST(value AS INTEGER) FROM cvars WHERE rank = 0 AND name = 'btl_vader_eager_limit'"),
            4096);
}

TEST(MessageQueues, EveryRankStoresItsWholeCvarSnapshotReadAfterMpiInit) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  // MPI_T is opened before MPI_Init, which closes the components it does not select; their cvars
  // are still listed and must read without touching unloaded memory (the job would crash).
  const std::int64_t stored = db->scalar("SELECT count(*) FROM cvars WHERE rank = 0");
  EXPECT_EQ(run_value(*db, "mpit_cvars"), std::to_string(stored));
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cvars"), stored * kRanks);
  EXPECT_EQ(db->scalar("SELECT count(DISTINCT name) FROM cvars"), stored);
}

TEST(MessageQueues, StartUpIsRecordedAsInitAndMpitInitRowsOnEveryRank) {
  auto db = open_merged(single_at_barriers());
  if (!db)
    return;
  for (const char* component : {"init", "mpit_init"}) {
    EXPECT_EQ(db->scalar(std::string("SELECT count(*) FROM profiler_overhead WHERE count = 1 AND time_ns > 0 "
                                     "AND component = '") +
                         component + "'"),
              kRanks)
        << component;
  }
}

TEST(MessageQueues, WithoutTheMpitCollectorNoMpitInitRowIsStored) {
  auto db = open_merged(run_cached("pmpi", {.command = {example_program("message_queues"), "single", "4"},
                                            .environment = {{"COMMLENS_COLLECTORS", "pmpi"}}}));
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM profiler_overhead WHERE component = 'init'"), kRanks);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM profiler_overhead WHERE component = 'mpit_init'"), 0);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM cvars"), 0);
  EXPECT_EQ(run_value(*db, "mpit_sampling"), "none: COMMLENS_COLLECTORS leaves mpit out");
}

TEST(MessageQueues, NoMatchingPvarsLeavesTheReasonInTheRunTableAndTheJobSucceeds) {
  auto db = open_merged(run_cached("none", {.command = {example_program("message_queues"), "single", "4"},
                                            .environment = {{"COMMLENS_PVARS", "none"}}}));
  if (!db)
    return;
  EXPECT_EQ(run_value(*db, "mpit_sampling"),
            "none: no performance variable of this MPI library matches COMMLENS_PVARS");
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_samples"), 0);
  EXPECT_GT(db->scalar("SELECT count(*) FROM pvars"), 0); // the catalogue is stored all the same
}

TEST(MessageQueues, CommunicatorBoundHandlesFollowCreatedCommunicatorsAndAreFreedWithThem) {
  auto db = open_merged(run_cached("split", {.command = {example_program("split_comms"), "3"}}));
  if (!db)
    return;
  const std::int64_t created =
      db->scalar("SELECT count(*) FROM communicators WHERE id <> 0 AND id % 4294967296 <> 1");
  EXPECT_GT(created, 0);
  // Both ob1 pvars on every created communicator a rank belongs to, each closed by its free or finalize.
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_handles WHERE comm_id <> 0 AND status = 'sampled'"),
            2 * created);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM pvar_handles WHERE freed_ns IS NULL AND status = 'sampled'"), 0);
}

} // namespace
} // namespace commlens::integration
