// The fuzzer's sub-buffers (fuzz/sub_buffer_arena.hpp): taken round the arena, never over one still
// in use, so a call's send and receive buffers cannot overlap.
#include "sub_buffer_arena.hpp"

#include <gtest/gtest.h>

#include <map>

namespace fuzz {
namespace {

constexpr std::size_t kArena = std::size_t{64} << 20;

bool overlap(std::size_t a, std::size_t a_bytes, std::size_t b, std::size_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

// A scatter's root at 8 ranks: a 63,557,184-byte send buffer late in the arena, then its
// 7,944,648-byte receive buffer, which wraps to the arena's start and would overlap the send
// buffer's first block (the block rank 0 receives).
TEST(SubBufferArena, AReceiveBufferNeverOverlapsTheLiveSendBuffer) {
  std::mt19937_64 random(7);
  SubBufferArena arena(kArena);
  const auto small = arena.place(3'000'000, 8, random);
  ASSERT_TRUE(small);
  arena.release(*small);
  const auto send = arena.place(63'557'184, 8, random);
  ASSERT_TRUE(send);
  EXPECT_GT(*send, 0U);
  const auto receive = arena.place(7'944'648, 8, random);
  ASSERT_LT(*send + 63'557'184 + 7'944'648, kArena + kArena); // it can only go round to the start
  EXPECT_FALSE(receive) << "placed at " << *receive << ", over the send buffer at " << *send;
  arena.release(*send);
  const auto again = arena.place(7'944'648, 8, random);
  EXPECT_TRUE(again); // the send buffer's place is free again
}

TEST(SubBufferArena, ReleasedPlacesAreHandedOutAgainAndLiveOnesNever) {
  std::mt19937_64 random(11);
  SubBufferArena arena(kArena);
  std::map<std::size_t, std::size_t> live; // offset -> bytes
  int reused = 0;
  for (int call = 0; call < 20000; ++call) {
    const std::size_t alignment = std::size_t{1} << (random() % 4);
    const std::size_t bytes = 1 + random() % (kArena / 3);
    ASSERT_TRUE(arena.fits(bytes, alignment));
    if (const auto offset = arena.place(bytes, alignment, random)) {
      EXPECT_LE(*offset + bytes, kArena);
      for (const auto& [other, other_bytes] : live) {
        ASSERT_FALSE(overlap(*offset, bytes, other, other_bytes)) << "call " << call;
      }
      live.emplace(*offset, bytes);
    }
    if (live.size() > random() % 3) { // release one, as calls release their buffers
      auto victim = live.begin();
      std::advance(victim, static_cast<long>(random() % live.size()));
      arena.release(victim->first);
      live.erase(victim);
      ++reused;
    }
  }
  EXPECT_GT(reused, 1000);
}

TEST(SubBufferArena, OffsetsFollowTheAlignmentButNowAndThenAreOneByteOff) {
  std::mt19937_64 random(3);
  SubBufferArena arena(kArena);
  int off_by_one = 0;
  for (int call = 0; call < 2000; ++call) {
    const auto offset = arena.place(1000, 8, random);
    ASSERT_TRUE(offset);
    off_by_one += *offset % 8 == 1 ? 1 : 0;
    EXPECT_TRUE(*offset % 8 == 0 || *offset % 8 == 1);
    arena.release(*offset);
  }
  EXPECT_GT(off_by_one, 0);
  EXPECT_FALSE(arena.fits(kArena, 1));
}

} // namespace
} // namespace fuzz
