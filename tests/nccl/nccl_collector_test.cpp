// The NCCL collector against the fake libnccl.so.2: nccl_traffic under `mpirun -np 2` with
// libcommlens.so preloaded. Expected values mirror the pattern documented in nccl_traffic_calls.cpp.
#include "harness/profiled_test.hpp"

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
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
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
    table.add(r, "nccl:Send", world, right, kP2pBytes, 0, n);
    table.add(r, "nccl:Recv", world, left, 0, kP2pBytes, n);
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

COMMLENS_IN_BOTH_MODES(NcclCollector);

} // namespace
} // namespace commlens::integration
