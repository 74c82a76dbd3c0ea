// split_comms: MPI_Comm_split halves, a dup of each half, collectives and point-to-point on them.
// Expected values mirror the pattern documented in examples/split_comms.c.
#include <algorithm>

#include "harness/profiled_test.hpp"

namespace commlens::integration {
namespace {

constexpr int kIterations = 20;
constexpr std::int64_t kBytes = 64 * 4;
constexpr int kHalf = kRanks / 2;

struct Registered {
  std::int64_t id, local_rank, size;
  std::string members, parent_id, created_by;
};

// communicators rows of one world rank, keyed by the call that created them.
std::map<std::string, Registered> registered_by(const Database& db, int rank) {
  std::map<std::string, Registered> out;
  for (const auto& row : db.query("SELECT c.id, c.local_rank, c.size, c.members, c.parent_id, "
                                  "COALESCE(f.name, 'none') FROM communicators c LEFT JOIN functions f ON "
                                  "f.id = c.created_by WHERE c.rank = " +
                                  std::to_string(rank))) {
    std::string members = row[3].text.value_or("");
    std::erase(members, ' ');
    const std::string parent = row[4].is_null ? "NULL" : std::to_string(row[4].as_int());
    out[*row[5].text] = {row[0].as_int(), row[1].as_int(), row[2].as_int(), members, parent, *row[5].text};
  }
  return out;
}

std::string half_members(int rank) {
  const int base = rank < kHalf ? 0 : kHalf;
  std::string members;
  for (int i = 0; i < kHalf; ++i)
    members += (i ? "," : "") + std::to_string(base + i);
  return members;
}

class SplitComms : public ProfiledExample {
protected:
  const JobResult& run() const { return job({example_program("split_comms"), std::to_string(kIterations)}); }
};

TEST_P(SplitComms, RegistersEachHalfAndItsDupWithTheirWorldMembersAndParents) {
  auto db = merged(run());
  if (!db)
    return;
  for (int r = 0; r < kRanks; ++r) {
    auto comms = registered_by(*db, r);
    ASSERT_TRUE(comms.contains("MPI_Comm_split") && comms.contains("MPI_Comm_dup")) << "rank " << r;
    const auto& half = comms["MPI_Comm_split"];
    const auto& dup = comms["MPI_Comm_dup"];
    EXPECT_EQ(half.members, half_members(r)) << "rank " << r;
    EXPECT_EQ(half.size, kHalf);
    EXPECT_EQ(half.local_rank, r % kHalf);
    EXPECT_EQ(half.parent_id, "0") << "the halves come from MPI_COMM_WORLD";
    EXPECT_EQ(dup.members, half_members(r));
    EXPECT_EQ(dup.parent_id, std::to_string(half.id)) << "the dup's parent is the half";
    EXPECT_NE(half.id, kWorld);
    EXPECT_NE(dup.id, half.id);
  }
  EXPECT_EQ(
      db->scalar("SELECT count(*) FROM communicators WHERE id = 0 AND size = " + std::to_string(kRanks)),
      kRanks)
      << "MPI_COMM_WORLD is id 0 on every rank";
}

TEST_P(SplitComms, GivesEveryMemberOfACommunicatorTheSameId) {
  auto db = merged(run());
  if (!db)
    return;
  for (const char* creator : {"MPI_Comm_split", "MPI_Comm_dup"})
    for (int r = 0; r < kRanks; ++r)
      for (int other = 0; other < kRanks; ++other) {
        const auto mine = registered_by(*db, r)[creator], theirs = registered_by(*db, other)[creator];
        if (mine.members == theirs.members) {
          EXPECT_EQ(mine.id, theirs.id) << creator << " ranks " << r << " and " << other;
        }
      }
}

TEST_P(SplitComms, StoresExactCallsPerCommunicatorWithWorldRankPeers) {
  auto db = merged(run());
  if (!db)
    return;
  CallTable expected;
  const int n = kIterations;
  for (int r = 0; r < kRanks; ++r) {
    auto comms = registered_by(*db, r);
    const std::int64_t half = comms["MPI_Comm_split"].id, dup = comms["MPI_Comm_dup"].id;
    const int l = r % kHalf, base = r - l;
    expected.add(r, "MPI_Comm_split", kWorld, kNoPeer, 0, 0);
    expected.add(r, "MPI_Comm_dup", half, kNoPeer, 0, 0);
    expected.add(r, "MPI_Allreduce", half, kNoPeer, kBytes, kBytes, n);
    expected.add(r, "MPI_Bcast", half, kNoPeer, l == 0 ? kBytes : 0, l == 0 ? 0 : kBytes, n);
    expected.add(r, "MPI_Send", half, base + (l + 1) % kHalf, kBytes, 0, n);
    expected.add(r, "MPI_Recv", half, base + (l - 1 + kHalf) % kHalf, 0, kBytes, n);
    expected.add(r, "MPI_Allreduce", dup, kNoPeer, 2 * kBytes, 2 * kBytes, n);
    expected.add(r, "MPI_Barrier", dup, kNoPeer, 0, 0, n);
  }
  expect_calls(*db, expected);
}

TEST_P(SplitComms, MarksBothCommunicatorsFreedAfterCommFree) {
  auto db = merged(run());
  if (!db)
    return;
  const auto stored = read_call_stats(*db, {"MPI_Comm_free"});
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(stored.count(r, "MPI_Comm_free"), 2) << "rank " << r;
    for (const char* creator : {"MPI_Comm_split", "MPI_Comm_dup"})
      EXPECT_EQ(
          db->scalar("SELECT count(*) FROM communicators c JOIN functions f ON f.id = c.created_by WHERE "
                     "c.freed_ns IS NOT NULL AND f.name = '" +
                     std::string(creator) + "' AND c.rank = " + std::to_string(r)),
          1)
          << "rank " << r << " " << creator;
  }
}

COMMLENS_IN_BOTH_MODES(SplitComms);

} // namespace
} // namespace commlens::integration
