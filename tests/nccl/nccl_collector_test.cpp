// The NCCL collector against the fake libnccl.so.2: nccl_traffic under `mpirun -np 2` with
// libcommlens.so preloaded. Expected values mirror the pattern documented in nccl_traffic_calls.cpp.
#include "harness/profiled_test.hpp"

#include <cstdlib>
#include <filesystem>
#include <set>

namespace commlens::integration {
namespace {

constexpr int kRanks2 = 2, kIterations = 3;
constexpr std::int64_t kAllReduceBytes = 1000 * 4, kBroadcastBytes = 256, kReduceBytes = 100 * 8,
                       kGatherBytes = 16 * 4, kScatterBytes = 8 * 8, kP2pBytes = 10 * 8, kSplitBytes = 32 * 8,
                       kBcastBytes = 64 * 4, kAlltoAllBytes = 4 * 4, kRootedGatherBytes = 8,
                       kRootedScatterBytes = 8 * 8;
constexpr std::int64_t kNcclIdBit = std::int64_t{1} << 62;

class NcclCollector : public ProfiledExample {
protected:
  const JobResult& run() const { return job(JobSpec{.command = {NCCL_TRAFFIC_PROGRAM}, .ranks = kRanks2}); }
  // The id rank `rank` stored for the communicator the named call created (with that local rank).
  static std::int64_t created_by(const Database& db, const std::string& function, int rank,
                                 int local_rank = -1) {
    return db.scalar(
        "SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by WHERE f.name = '" +
        function + "' AND c.rank = " + std::to_string(rank) +
        (local_rank < 0 ? "" : " AND c.local_rank = " + std::to_string(local_rank)));
  }
  // Every call of nccl_traffic_calls.cpp, with the ids this run gave its communicators.
  static CallTable expected_calls(const Database& db);
};

CallTable NcclCollector::expected_calls(const Database& db) {
  CallTable table;
  const int p = kRanks2, n = kIterations;
  const std::int64_t world = created_by(db, "nccl:CommInitRank", 0);
  const std::int64_t split = created_by(db, "nccl:CommSplit", 0);
  for (int r = 0; r < p; ++r) {
    const std::int64_t first_local = created_by(db, "nccl:CommInitAll", r, 0);
    const std::int64_t second_local = created_by(db, "nccl:CommInitAll", r, 1);
    table.add(r, "nccl:CommInitRank", world, kNoPeer, 0, 0);
    table.add(r, "nccl:AllReduce", world, kNoPeer, kAllReduceBytes, kAllReduceBytes, n);
    table.add(r, "nccl:Broadcast", world, kNoPeer, r == 1 ? kBroadcastBytes : 0, r == 1 ? 0 : kBroadcastBytes,
              n);
    table.add(r, "nccl:Reduce", world, kNoPeer, kReduceBytes, r == 0 ? kReduceBytes : 0, n);
    table.add(r, "nccl:AllGather", world, kNoPeer, kGatherBytes, kGatherBytes * p, n);
    table.add(r, "nccl:ReduceScatter", world, kNoPeer, kScatterBytes * p, kScatterBytes, n);
    table.add(r, "nccl:GroupStart", kNoCommunicator, kNoPeer, 0, 0, n);
    // The peers are other processes, whose run ranks a member cannot know: -1 (nccl_calls and
    // nccl_call_stats keep the NCCL ranks).
    table.add(r, "nccl:Send", world, kNoPeer, kP2pBytes, 0, n);
    table.add(r, "nccl:Recv", world, kNoPeer, 0, kP2pBytes, n);
    table.add(r, "nccl:GroupEnd", kNoCommunicator, kNoPeer, 0, 0, n);
    table.add(r, "nccl:Bcast", world, kNoPeer, r == 0 ? kBcastBytes : 0, r == 0 ? 0 : kBcastBytes, n);
    table.add(r, "nccl:AlltoAll", world, kNoPeer, kAlltoAllBytes * p, kAlltoAllBytes * p, n);
    table.add(r, "nccl:Gather", world, kNoPeer, kRootedGatherBytes, r == 1 ? kRootedGatherBytes * p : 0, n);
    table.add(r, "nccl:Scatter", world, kNoPeer, r == 0 ? kRootedScatterBytes * p : 0, kRootedScatterBytes,
              n);
    table.add(r, "nccl:CommSplit", split, kNoPeer, 0, 0);
    table.add(r, "nccl:AllReduce", split, kNoPeer, kSplitBytes, kSplitBytes);
    table.add(r, "nccl:CommDestroy", split, kNoPeer, 0, 0);
    table.add(r, "nccl:CommDestroy", world, kNoPeer, 0, 0);
    // The call names the last communicator it created.
    table.add(r, "nccl:CommInitAll", second_local, kNoPeer, 0, 0);
    table.add(r, "nccl:CommAbort", first_local, kNoPeer, 0, 0);
    table.add(r, "nccl:CommDestroy", second_local, kNoPeer, 0, 0);
  }
  return table;
}

TEST_P(NcclCollector, StoresExactCallsBytesPeersAndCommunicators) {
  auto db = merged(run());
  if (!db)
    return;
  expect_calls(*db, expected_calls(*db));
}

// NCCL loaded with dlopen(RTLD_LOCAL) beneath a library that is itself dlopen'ed: the wrappers
// find it through the RTLD_NOLOAD fallback and record the same calls.
TEST_P(NcclCollector, SeesNcclThatADlopenedLibraryLoadedLocally) {
  const JobResult& result =
      job(JobSpec{.command = {NCCL_TRAFFIC_DLOPEN_PROGRAM, NCCL_TRAFFIC_LIBRARY}, .ranks = kRanks2});
  auto db = merged(result);
  if (!db)
    return;
  expect_calls(*db, expected_calls(*db));
}

TEST_P(NcclCollector, RegistersCommunicatorsWithTheSameIdOnEveryMemberWithoutMpi) {
  auto db = merged(run());
  if (!db)
    return;
  const std::int64_t world = created_by(*db, "nccl:CommInitRank", 0);
  const std::int64_t split = created_by(*db, "nccl:CommSplit", 0);
  EXPECT_NE(world & kNcclIdBit, 0) << "NCCL ids have bit 62 set";
  EXPECT_NE(split & kNcclIdBit, 0);
  EXPECT_NE(world, split);
  for (int r = 0; r < kRanks2; ++r) {
    EXPECT_EQ(created_by(*db, "nccl:CommInitRank", r), world) << "rank " << r;
    EXPECT_EQ(created_by(*db, "nccl:CommSplit", r), split) << "rank " << r;
    const std::string members = r == 0 ? "0,-1" : "-1,1"; // only its own run rank is known
    for (const std::int64_t id : {world, split}) {
      const auto rows =
          db->query("SELECT local_rank, size, members, parent_id, freed_ns FROM communicators WHERE id = " +
                    std::to_string(id) + " AND rank = " + std::to_string(r));
      ASSERT_EQ(rows.size(), 1u) << "rank " << r;
      EXPECT_EQ(rows[0][0].as_int(), r);
      EXPECT_EQ(rows[0][1].as_int(), kRanks2);
      std::string stored = rows[0][2].text.value_or("");
      std::erase(stored, ' ');
      EXPECT_EQ(stored, members);
      EXPECT_EQ(rows[0][3].as_int(-1), id == split ? world : -1) << "the split's parent is the first";
      EXPECT_GT(rows[0][4].as_int(0), 0) << "both were destroyed";
    }
    // ncclCommInitAll: two communicators of this process, ids of its own, both ended.
    const std::int64_t first_local = created_by(*db, "nccl:CommInitAll", r, 0);
    const std::int64_t second_local = created_by(*db, "nccl:CommInitAll", r, 1);
    EXPECT_NE(first_local & kNcclIdBit, 0) << "rank " << r;
    EXPECT_NE(first_local, second_local);
    EXPECT_NE(first_local, created_by(*db, "nccl:CommInitAll", 1 - r, 0)) << "each process has its own";
    EXPECT_EQ(db->scalar("SELECT count(*) FROM communicators WHERE rank = " + std::to_string(r) +
                         " AND id IN (" + std::to_string(first_local) + ", " + std::to_string(second_local) +
                         ") AND size = 2 AND freed_ns > 0"),
              2);
  }
}

TEST_P(NcclCollector, StoresRootsAndGroupDepthPerCallInTrace) {
  if (!trace())
    GTEST_SKIP() << "mpi_calls rows exist in trace mode only";
  auto db = merged(run());
  if (!db)
    return;
  const auto per_function = [&](const std::string& function, const std::string& column) {
    return db->query("SELECT DISTINCT m." + column +
                     " FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                     "WHERE f.name = '" +
                     function + "'");
  };
  const auto single = [&](const std::string& function, const std::string& column) {
    const auto rows = per_function(function, column);
    return rows.size() == 1 ? rows[0][0].as_int(-99) : -100;
  };
  EXPECT_EQ(single("nccl:Broadcast", "root"), 1);
  EXPECT_EQ(single("nccl:Reduce", "root"), 0);
  EXPECT_EQ(single("nccl:Bcast", "root"), 0);
  EXPECT_EQ(single("nccl:Gather", "root"), 1);
  EXPECT_EQ(single("nccl:Scatter", "root"), 0);
  EXPECT_EQ(single("nccl:AllReduce", "tag"), 0) << "outside any group";
  EXPECT_EQ(single("nccl:Send", "tag"), 1) << "inside one group";
  EXPECT_EQ(single("nccl:Recv", "tag"), 1);
  EXPECT_EQ(single("nccl:GroupStart", "tag"), 1) << "the level it opens";
  EXPECT_EQ(single("nccl:GroupEnd", "tag"), 1) << "the level it closes";
  EXPECT_EQ(db->scalar("SELECT count(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                       "WHERE f.name LIKE 'nccl:%' AND m.end_ns < m.start_ns"),
            0);
}

// nccl_call_stats: call_stats' key plus datatype, op, stream, root, NCCL peer and group nesting.
TEST_P(NcclCollector, StoresDatatypeOpStreamRootPeerAndGroupDepthPerCall) {
  auto db = merged(run());
  if (!db)
    return;
  const auto details = [&](const std::string& function, int rank) {
    return db->query("SELECT coalesce(d.name, '-'), coalesce(o.name, '-'), coalesce(s.stream, -1), "
                     "coalesce(s.root, -1), coalesce(s.peer, -1), s.group_depth, sum(s.count) "
                     "FROM nccl_call_stats s JOIN functions f ON f.id = s.function_id "
                     "LEFT JOIN nccl_datatypes d ON d.id = s.datatype LEFT JOIN nccl_ops o ON o.id = s.op "
                     "WHERE f.name = '" +
                     function + "' AND s.rank = " + std::to_string(rank) +
                     " GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 7");
  };
  const auto row_text = [](const std::vector<Value>& row) {
    std::string text;
    for (const Value& value : row)
      text += (text.empty() ? "" : " ") + (value.text ? *value.text : std::to_string(value.as_int()));
    return text;
  };
  const auto only = [&](const std::string& function, int rank) {
    const auto rows = details(function, rank);
    return rows.size() == 1 ? row_text(rows[0]) : std::to_string(rows.size()) + " rows";
  };
  for (int r = 0; r < kRanks2; ++r) {
    const int right = (r + 1) % kRanks2, left = (r - 1 + kRanks2) % kRanks2;
    EXPECT_EQ(details("nccl:AllReduce", r).size(), 2u) << "the world's float32 and the split's int64";
    EXPECT_EQ(row_text(details("nccl:AllReduce", r).back()), "ncclFloat32 ncclSum 0 -1 -1 0 3");
    EXPECT_EQ(only("nccl:Broadcast", r), "ncclInt8 - 0 1 -1 0 3");
    EXPECT_EQ(only("nccl:Reduce", r), "ncclFloat64 ncclSum 0 0 -1 0 3");
    EXPECT_EQ(only("nccl:Send", r), "ncclFloat64 - 0 -1 " + std::to_string(right) + " 1 3");
    EXPECT_EQ(only("nccl:Recv", r), "ncclFloat64 - 0 -1 " + std::to_string(left) + " 1 3");
    EXPECT_EQ(only("nccl:GroupStart", r), "- - -1 -1 -1 1 3");
    EXPECT_EQ(only("nccl:CommInitRank", r), "- - -1 -1 -1 0 1");
  }
  // Every recorded call has its row: the side table adds up to call_stats.
  EXPECT_EQ(db->scalar("SELECT sum(count) FROM nccl_call_stats"),
            db->scalar("SELECT sum(s.count) FROM call_stats s JOIN functions f ON f.id = s.function_id "
                       "WHERE f.name LIKE 'nccl:%'"));
  if (trace()) {
    EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_calls n JOIN mpi_calls m ON m.id = n.call_id"),
              db->scalar("SELECT count(*) FROM mpi_calls m JOIN functions f ON f.id = m.function_id "
                         "WHERE f.name LIKE 'nccl:%'"));
    EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_calls n JOIN mpi_calls m ON m.id = n.call_id "
                         "JOIN functions f ON f.id = m.function_id WHERE f.name = 'nccl:Send' AND n.peer = "
                         "(m.rank + 1) % 2 AND n.group_depth = 1 AND n.datatype = 8"),
              kRanks2 * kIterations);
  } else {
    EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_calls"), 0) << "one row per call only in trace mode";
  }
  // The merged file maps an NCCL peer to its run rank through the members' communicators rows.
  EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_call_stats s JOIN communicators c ON c.id = s.comm_id AND "
                       "c.local_rank = s.peer WHERE c.rank <> s.rank"),
            2 * kRanks2);
}

// A process that never calls MPI_Init and was not started by mpirun: the first NCCL call starts
// the profiler (rank 0 of 1: no $RANK), which stops and merges at exit.
TEST_P(NcclCollector, RecordsAProcessThatNeverInitialisesMpi) {
  auto db = merged(job(JobSpec{.command = {NCCL_EARLY_PROGRAM}, .without_launcher = true}));
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM ranks"), 1);
  EXPECT_EQ(db->scalar("SELECT rank FROM ranks"), 0);
  const std::int64_t comm =
      db->scalar("SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by "
                 "WHERE f.name = 'nccl:CommInitRank'");
  EXPECT_NE(comm & kNcclIdBit, 0);
  CallTable table;
  table.add(0, "nccl:CommInitRank", comm, kNoPeer, 0, 0);
  table.add(0, "nccl:AllReduce", comm, kNoPeer, 512 * 4, 512 * 4, 4);
  table.add(0, "nccl:GroupStart", kNoCommunicator, kNoPeer, 0, 0);
  table.add(0, "nccl:Send", comm, 0, 6 * 8, 0); // a peer that is the process itself: its run rank
  table.add(0, "nccl:Recv", comm, 0, 0, 6 * 8);
  table.add(0, "nccl:GroupEnd", kNoCommunicator, kNoPeer, 0, 0);
  table.add(0, "nccl:CommDestroy", comm, kNoPeer, 0, 0);
  expect_calls(*db, table);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_call_stats s JOIN functions f ON f.id = s.function_id "
                       "WHERE f.name = 'nccl:AllReduce' AND s.op = 2 AND s.stream = 16 AND s.datatype = 7"),
            1);
  EXPECT_EQ(db->scalar("SELECT count(*) FROM nccl_call_stats s JOIN functions f ON f.id = s.function_id "
                       "WHERE f.name = 'nccl:Send' AND s.stream = 32 AND s.peer = 0 AND s.group_depth = 1"),
            1);
}

// Under mpirun, a process that never calls MPI_Init (a PyTorch job using NCCL alone) is profiled
// from its first NCCL call with COMMLENS_START_AT_NCCL=1, as the launcher's rank of its size; the
// rank files merge afterwards. Without the setting, nothing is recorded and each rank says so.
TEST_P(NcclCollector, RecordsProcessesUnderMpirunThatNeverInitialiseMpiWhenAsked) {
  const JobResult unasked = job(JobSpec{.command = {NCCL_EARLY_PROGRAM}, .ranks = kRanks2});
  EXPECT_EQ(unasked.exit_code, 0) << unasked.describe();
  EXPECT_FALSE(std::filesystem::exists(unasked.rank_database(0)));
  EXPECT_NE(unasked.standard_error.find("made 10 NCCL calls under an MPI launcher and never called MPI_Init"),
            std::string::npos)
      << unasked.describe();
  const JobResult asked = job(JobSpec{
      .command = {NCCL_EARLY_PROGRAM}, .environment = {{"COMMLENS_START_AT_NCCL", "1"}}, .ranks = kRanks2});
  ASSERT_EQ(asked.exit_code, 0) << asked.describe();
  const std::string merge =
      std::string(COMMLENS_CLI) + " merge " + asked.output_directory.string() + " >/dev/null";
  ASSERT_EQ(std::system(merge.c_str()), 0) << merge;
  auto db = merged(asked);
  if (!db)
    return;
  EXPECT_EQ(db->scalar("SELECT count(*) FROM ranks"), kRanks2);
  const std::int64_t comm = created_by(*db, "nccl:CommInitRank", 1);
  CallTable table;
  for (int r = 0; r < kRanks2; ++r) {
    EXPECT_EQ(created_by(*db, "nccl:CommInitRank", r), comm) << "rank " << r;
    table.add(r, "nccl:CommInitRank", comm, kNoPeer, 0, 0);
    table.add(r, "nccl:AllReduce", comm, kNoPeer, 512 * 4, 512 * 4, 4);
    table.add(r, "nccl:GroupStart", kNoCommunicator, kNoPeer, 0, 0);
    // NCCL rank 0 of its one-rank communicator: the process itself, so its run rank.
    table.add(r, "nccl:Send", comm, r, 6 * 8, 0);
    table.add(r, "nccl:Recv", comm, r, 0, 6 * 8);
    table.add(r, "nccl:GroupEnd", kNoCommunicator, kNoPeer, 0, 0);
    table.add(r, "nccl:CommDestroy", comm, kNoPeer, 0, 0);
  }
  expect_calls(*db, table);
}

// Under mpirun, the communicators made before MPI_Init are registered when MPI_Init starts the
// profiler, with the ids the same calls would have given them later: the later calls name them,
// a split has the same id on every member, and the splits and InitAll communicators made after
// MPI_Init continue the sequence (new ids, not the early ones again). A communicator destroyed
// before MPI_Init is registered as created and freed, and its split still names it as parent.
TEST_P(NcclCollector, RegistersCommunicatorsCreatedBeforeMpiInit) {
  auto db = merged(job(JobSpec{.command = {NCCL_EARLY_PROGRAM, "--mpi"}, .ranks = kRanks2}));
  if (!db)
    return;
  const auto unique_id_comms =
      db->query("SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by "
                "WHERE f.name = 'nccl:CommInitRank' AND c.rank = 0 ORDER BY c.created_ns");
  ASSERT_EQ(unique_id_comms.size(), 2u) << "the long-lived one and the one destroyed before MPI_Init";
  const std::int64_t comm = unique_id_comms[0][0].as_int();
  const std::int64_t doomed = unique_id_comms[1][0].as_int();
  EXPECT_NE(comm & kNcclIdBit, 0);
  EXPECT_NE(comm, doomed);
  const auto splits = db->query("SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by "
                                "WHERE f.name = 'nccl:CommSplit' AND c.rank = 0 AND c.parent_id = " +
                                std::to_string(comm) + " ORDER BY c.created_ns");
  ASSERT_EQ(splits.size(), 2u) << "the early split and the later one";
  const std::int64_t orphan =
      db->scalar("SELECT c.id FROM communicators c JOIN functions f ON f.id = c.created_by "
                 "WHERE f.name = 'nccl:CommSplit' AND c.rank = 0 AND c.parent_id = " +
                 std::to_string(doomed));
  const std::int64_t early_split = splits[0][0].as_int();
  const std::int64_t later_split = splits[1][0].as_int();
  EXPECT_NE(early_split, later_split) << "the later split is the parent's second";
  CallTable table;
  for (int r = 0; r < kRanks2; ++r) {
    const std::string rank = std::to_string(r);
    const auto own_comms =
        db->query("SELECT c.id, c.freed_ns > c.created_ns, c.freed_ns < (SELECT min(created_ns) "
                  "FROM communicators WHERE id = " +
                  std::to_string(orphan) + " AND rank = " + rank +
                  ") FROM communicators c JOIN functions f ON f.id = c.created_by WHERE f.name = "
                  "'nccl:CommInitRank' AND c.rank = " +
                  rank + " ORDER BY c.created_ns");
    ASSERT_EQ(own_comms.size(), 2u) << "rank " << r;
    EXPECT_EQ(own_comms[0][0].as_int(), comm) << "rank " << r;
    EXPECT_EQ(own_comms[1][0].as_int(), doomed) << "rank " << r;
    EXPECT_EQ(own_comms[1][1].as_int(), 1) << "rank " << r << ": freed after it was created";
    EXPECT_EQ(own_comms[1][2].as_int(), 0) << "rank " << r << ": freed after its split was made";
    EXPECT_EQ(db->scalar("SELECT count(*) FROM communicators WHERE id = " + std::to_string(orphan) +
                         " AND parent_id = " + std::to_string(doomed) + " AND rank = " + rank),
              1)
        << "rank " << r << ": the destroyed parent's split has the same id on every member";
    const auto split_rows =
        db->query("SELECT c.id, c.parent_id FROM communicators c JOIN functions f "
                  "ON f.id = c.created_by WHERE f.name = 'nccl:CommSplit' AND c.rank = " +
                  rank + " AND c.parent_id = " + std::to_string(comm) + " ORDER BY c.created_ns");
    ASSERT_EQ(split_rows.size(), 2u) << "rank " << r;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(split_rows[i][0].as_int(), i == 0 ? early_split : later_split) << "rank " << r;
      EXPECT_EQ(split_rows[i][1].as_int(), comm) << "rank " << r;
    }
    // The fake NCCL gives InitAll's communicator i rank i: the early ones are ranks 0 and 1, the
    // later one rank 0 again.
    const auto first_locals = db->query("SELECT c.id FROM communicators c JOIN functions f ON f.id = "
                                        "c.created_by WHERE f.name = 'nccl:CommInitAll' AND c.local_rank = 0 "
                                        "AND c.rank = " +
                                        std::to_string(r) + " ORDER BY c.created_ns");
    ASSERT_EQ(first_locals.size(), 2u) << "rank " << r << ": the early one and the later one";
    const std::int64_t early_first_local = first_locals[0][0].as_int();
    const std::int64_t early_local = created_by(*db, "nccl:CommInitAll", r, 1);
    const std::int64_t later_local = first_locals[1][0].as_int();
    const std::set<std::int64_t> distinct{early_first_local, early_local, later_local};
    EXPECT_EQ(distinct.size(), 3u) << "rank " << r;
    for (const std::int64_t local : distinct) {
      EXPECT_NE(local & kNcclIdBit, 0);
    }
    table.add(r, "nccl:AllReduce", comm, kNoPeer, 512 * 4, 512 * 4, 4);
    table.add(r, "nccl:AllReduce", early_split, kNoPeer, 256 * 4, 256 * 4);
    table.add(r, "nccl:AllReduce", early_local, kNoPeer, 256 * 4, 256 * 4);
    table.add(r, "nccl:AllReduce", orphan, kNoPeer, 128 * 4, 128 * 4);
    table.add(r, "nccl:CommSplit", later_split, kNoPeer, 0, 0);
    table.add(r, "nccl:CommInitAll", later_local, kNoPeer, 0, 0);
    for (const std::int64_t destroyed :
         {early_split, early_first_local, early_local, later_split, later_local, orphan, comm}) {
      table.add(r, "nccl:CommDestroy", destroyed, kNoPeer, 0, 0);
    }
  }
  expect_calls(*db, table);
  EXPECT_EQ(
      db->query("SELECT value FROM run WHERE key = 'nccl_calls_before_mpi_init'").at(0)[0].text.value_or(""),
      "6");
}

COMMLENS_IN_BOTH_MODES(NcclCollector);

} // namespace
} // namespace commlens::integration
