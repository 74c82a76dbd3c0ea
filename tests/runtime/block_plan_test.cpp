// Where the data-movement collectives' blocks come from and go to (runtime/collectives/
// data_movement/block_plan.hpp): every block of every collective lands exactly once where MPI
// says, for every rank count, root and in-place choice; the copy order spreads the sources.
#include "device/block_plan.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <tuple>
#include <vector>

namespace commlens::runtime::movement {
namespace {

std::vector<BlockCopy> copies(const CallGeometry& call, int destination) {
  std::array<BlockCopy, kMaxPlanRanks> out{};
  const int count = copies_into(call, destination, out);
  return {out.begin(), out.begin() + count};
}

// (source, source offset) -> (destination, destination offset) over every destination.
using Moves = std::map<std::tuple<int, std::uint64_t, int, std::uint64_t>, int>;
Moves all_moves(const CallGeometry& call) {
  Moves moves;
  for (int destination = 0; destination < call.ranks; ++destination) {
    for (const BlockCopy& copy : copies(call, destination)) {
      EXPECT_EQ(copy.destination, destination);
      EXPECT_EQ(copy.bytes, call.block_bytes);
      ++moves[{copy.source, copy.source_offset, copy.destination, copy.destination_offset}];
    }
  }
  return moves;
}

TEST(BlockPlan, AllgatherPutsEveryRanksBlockAtItsIndexInEveryOutput) {
  for (int ranks = 1; ranks <= kMaxPlanRanks; ++ranks) {
    for (const bool in_place : {false, true}) {
      const CallGeometry call{
          .collective = Collective::Allgather, .ranks = ranks, .in_place = in_place, .block_bytes = 12};
      Moves expected;
      for (int d = 0; d < ranks; ++d) {
        for (int s = 0; s < ranks; ++s) {
          if (!(in_place && s == d)) {
            expected[{s, 0, d, 12u * static_cast<std::uint64_t>(s)}] = 1;
          }
        }
      }
      EXPECT_EQ(all_moves(call), expected) << ranks << " ranks, in place " << in_place;
    }
  }
}

TEST(BlockPlan, GatherFillsOnlyTheRootAndSkipsItsOwnBlockInPlace) {
  for (int root = 0; root < 5; ++root) {
    for (const bool in_place : {false, true}) {
      const CallGeometry call{
          .collective = Collective::Gather, .ranks = 5, .root = root, .in_place = in_place, .block_bytes = 7};
      Moves expected;
      for (int s = 0; s < 5; ++s) {
        if (!(in_place && s == root)) {
          expected[{s, 0, root, 7u * static_cast<std::uint64_t>(s)}] = 1;
        }
      }
      EXPECT_EQ(all_moves(call), expected);
      EXPECT_EQ(has_input(call, root), !in_place);
      EXPECT_TRUE(has_output(call, root));
      EXPECT_FALSE(has_output(call, (root + 1) % 5));
      EXPECT_EQ(inputs_read(call, 1U << ((root + 1) % 5)), 0U) << "a non-root reads nothing";
    }
  }
}

TEST(BlockPlan, ScatterSendsBlockDOfTheRootToRankD) {
  for (int root = 0; root < 4; ++root) {
    for (const bool in_place : {false, true}) {
      const CallGeometry call{.collective = Collective::Scatter,
                              .ranks = 4,
                              .root = root,
                              .in_place = in_place,
                              .block_bytes = 3};
      Moves expected;
      for (int d = 0; d < 4; ++d) {
        if (!(in_place && d == root)) {
          expected[{root, 3u * static_cast<std::uint64_t>(d), d, 0}] = 1;
        }
      }
      EXPECT_EQ(all_moves(call), expected);
      EXPECT_EQ(inputs_read(call, 0xF), 1U << root);
      EXPECT_FALSE(has_input(call, (root + 1) % 4));
    }
  }
}

TEST(BlockPlan, AlltoallSendsBlockDOfRankSToBlockSOfRankD) {
  const CallGeometry call{.collective = Collective::Alltoall, .ranks = 8, .block_bytes = 1000};
  Moves expected;
  for (int d = 0; d < 8; ++d) {
    for (int s = 0; s < 8; ++s) {
      expected[{s, 1000u * static_cast<std::uint64_t>(d), d, 1000u * static_cast<std::uint64_t>(s)}] = 1;
    }
  }
  EXPECT_EQ(all_moves(call), expected);
}

TEST(BlockPlan, EachDestinationStartsWithTheNextRankSoSimultaneousCopiesReadDifferentPeers) {
  const CallGeometry call{.collective = Collective::Alltoall, .ranks = 4, .block_bytes = 1};
  for (int step = 0; step < 4; ++step) {
    std::vector<int> first_sources;
    for (int d = 0; d < 4; ++d) {
      const auto plan = copies(call, d);
      ASSERT_EQ(plan.size(), 4u);
      EXPECT_EQ(plan[static_cast<std::size_t>(step)].source, (d + step + 1) % 4);
      first_sources.push_back(plan[static_cast<std::size_t>(step)].source);
    }
    std::sort(first_sources.begin(), first_sources.end());
    EXPECT_EQ(first_sources, (std::vector<int>{0, 1, 2, 3})) << "step " << step;
  }
}

TEST(BlockPlan, ReduceScatterBlockSlicesAreConsecutiveBlocks) {
  const CallGeometry call{
      .collective = Collective::ReduceScatterBlock, .ranks = 3, .block_bytes = 40, .element_bytes = 8};
  for (int d = 0; d < 3; ++d) {
    const Slice slice = reduction_slice(call, d);
    EXPECT_EQ(slice.first, 5u * static_cast<std::uint64_t>(d));
    EXPECT_EQ(slice.elements, 5u);
    EXPECT_TRUE(copies(call, d).empty());
  }
  EXPECT_EQ(inputs_read(call, 1U << 1), 0b111U);
}

TEST(BlockPlan, ReduceScatterSlicesFollowTheCountsPrefixSums) {
  const std::vector<int> counts{3, 0, 5, 1};
  const CallGeometry call{.collective = Collective::ReduceScatter,
                          .ranks = 4,
                          .block_bytes = 9,
                          .counts = counts,
                          .element_bytes = 4};
  const std::uint64_t firsts[] = {0, 3, 3, 8};
  for (int d = 0; d < 4; ++d) {
    const Slice slice = reduction_slice(call, d);
    EXPECT_EQ(slice.first, firsts[d]) << d;
    EXPECT_EQ(slice.elements, static_cast<std::uint64_t>(counts[static_cast<std::size_t>(d)])) << d;
  }
  // Rank 1 receives nothing: no output to map, and serving it alone reads no input.
  EXPECT_FALSE(has_output(call, 1));
  EXPECT_TRUE(has_output(call, 3));
  EXPECT_EQ(inputs_read(call, 1U << 1), 0U);
  EXPECT_EQ(inputs_read(call, 0b0011), 0b1111U);
}

TEST(BlockPlan, AGpuLeaderReadsTheUnionOfItsRanksSources) {
  const CallGeometry call{.collective = Collective::Scatter, .ranks = 4, .root = 2, .block_bytes = 1};
  EXPECT_EQ(inputs_read(call, 0b0011), 1U << 2);
  const CallGeometry gather{.collective = Collective::Gather, .ranks = 4, .root = 1, .block_bytes = 1};
  EXPECT_EQ(inputs_read(gather, 0b0010), 0b1111U);
  EXPECT_EQ(inputs_read(gather, 0b1101), 0U);
}

} // namespace
} // namespace commlens::runtime::movement
