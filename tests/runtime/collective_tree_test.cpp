// The rooted collectives' trees (every shape, every root, 1..N ranks, on one GPU, several GPUs and
// several nodes) and their segment schedule (runtime/trees/).
#include "trees/collective_tree.hpp"
#include "trees/segment_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace commlens::runtime::trees {
namespace {

std::vector<Placement> one_gpu(int ranks) {
  return std::vector<Placement>(ranks);
}

// gpus_per_node GPUs per node, ranks_per_gpu ranks per GPU, consecutive ranks together.
std::vector<Placement> placed(int ranks, int ranks_per_gpu, int gpus_per_node) {
  std::vector<Placement> placements;
  for (int rank = 0; rank < ranks; ++rank) {
    const int gpu = rank / ranks_per_gpu;
    placements.push_back({gpu / gpus_per_node, gpu % gpus_per_node});
  }
  return placements;
}

// Every rank reaches the root, each rank is the child of its parent exactly once, and only
// leaders have children outside their GPU.
void expect_valid(const Tree& tree, const std::vector<Placement>& placements) {
  const int size = tree.size();
  ASSERT_EQ(tree.parent[tree.root], -1);
  std::vector<int> seen(size, 0);
  for (int rank = 0; rank < size; ++rank) {
    for (const int child : tree.children[rank]) {
      ASSERT_EQ(tree.parent[child], rank);
      ++seen[child];
    }
    int hops = 0;
    for (int at = rank; at != tree.root; at = tree.parent[at]) {
      ASSERT_GE(tree.parent[at], 0) << "rank " << rank << " does not reach the root";
      ASSERT_LT(++hops, size);
    }
  }
  for (int rank = 0; rank < size; ++rank) {
    EXPECT_EQ(seen[rank], rank == tree.root ? 0 : 1) << "rank " << rank;
  }
  // A rank's parent shares its GPU, or both lead their GPUs.
  for (int rank = 0; rank < size; ++rank) {
    const int parent = tree.parent[rank];
    if (parent < 0) {
      continue;
    }
    const bool same_gpu =
        placements[rank].node == placements[parent].node && placements[rank].gpu == placements[parent].gpu;
    if (!same_gpu) {
      // rank leads its GPU: no lower rank (or the root) shares it.
      for (int other = 0; other < size; ++other) {
        const bool shares =
            placements[other].node == placements[rank].node && placements[other].gpu == placements[rank].gpu;
        if (shares && other != rank) {
          EXPECT_TRUE(other > rank && other != tree.root) << "rank " << rank << " is not its GPU's leader";
        }
      }
    }
  }
}

TEST(CollectiveTree, EveryShapeRootAndSizeOnOneGpuIsAValidTree) {
  for (const Shape shape : kShapes) {
    for (int size = 1; size <= 17; ++size) {
      for (int root = 0; root < size; ++root) {
        SCOPED_TRACE(std::string(shape_name(shape)) + " size " + std::to_string(size) + " root " +
                     std::to_string(root));
        const auto placements = one_gpu(size);
        expect_valid(build_tree(placements, root, {shape, shape, shape}), placements);
      }
    }
  }
}

TEST(CollectiveTree, EveryShapeOnSeveralGpusAndNodesIsAValidTree) {
  for (const Shape gpu : kShapes) {
    for (const Shape node : kShapes) {
      for (const Shape nodes : kShapes) {
        for (const auto& [size, per_gpu, gpus_per_node] :
             {std::tuple{8, 1, 2}, {8, 2, 2}, {13, 2, 3}, {12, 3, 1}, {7, 1, 8}}) {
          for (int root = 0; root < size; ++root) {
            const auto placements = placed(size, per_gpu, gpus_per_node);
            expect_valid(build_tree(placements, root, {gpu, node, nodes}), placements);
          }
        }
      }
    }
  }
}

TEST(CollectiveTree, ShapesOnOneLevelHaveTheirEdges) {
  const auto placements = one_gpu(8);
  const Tree flat = build_tree(placements, 0, {Shape::Flat, Shape::Flat, Shape::Flat});
  EXPECT_EQ(flat.children[0], (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(flat.depth(), 1);
  const Tree chain = build_tree(placements, 0, {Shape::Chain, Shape::Flat, Shape::Flat});
  EXPECT_EQ(chain.parent, (std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(chain.depth(), 7);
  const Tree binary = build_tree(placements, 0, {Shape::Binary, Shape::Flat, Shape::Flat});
  EXPECT_EQ(binary.parent, (std::vector<int>{-1, 0, 0, 1, 1, 2, 2, 3}));
  const Tree binomial = build_tree(placements, 0, {Shape::Binomial, Shape::Flat, Shape::Flat});
  EXPECT_EQ(binomial.parent, (std::vector<int>{-1, 0, 0, 1, 0, 1, 2, 3})); // i without its highest bit
  EXPECT_EQ(binomial.children[0], (std::vector<int>{4, 2, 1}));            // largest subtree first
  EXPECT_EQ(binomial.depth(), 3);
}

TEST(CollectiveTree, ARootOtherThanZeroLeadsAndTheOthersFollowInRankOrder) {
  const auto placements = one_gpu(5);
  const Tree chain = build_tree(placements, 3, {Shape::Chain, Shape::Flat, Shape::Flat});
  EXPECT_EQ(chain.parent, (std::vector<int>{3, 0, 1, -1, 2}));
  EXPECT_EQ(chain.root, 3);
}

TEST(CollectiveTree, LevelsJoinThroughLeadersAndLeadersServeOtherNodesFirst) {
  // Two nodes of two GPUs of two ranks: ranks 0-3 on node 0, 4-7 on node 1; root 5.
  const auto placements = placed(8, 2, 2);
  const Tree tree = build_tree(placements, 5, {Shape::Flat, Shape::Chain, Shape::Flat});
  EXPECT_EQ(tree.parent[0], 5); // node 0's leader under the root (nodes level)
  EXPECT_EQ(tree.parent[2], 0); // node 0's second GPU leader under its node leader
  EXPECT_EQ(tree.parent[1], 0); // GPU level
  EXPECT_EQ(tree.parent[3], 2);
  EXPECT_EQ(tree.parent[6], 5); // the root's node: its other GPU's leader
  EXPECT_EQ(tree.parent[4], 5); // the root's GPU: the root leads it
  EXPECT_EQ(tree.parent[7], 6);
  EXPECT_EQ(tree.children[5], (std::vector<int>{0, 6, 4}));
}

TEST(CollectiveTree, RejectsARootOutsideTheCommunicator) {
  const auto placements = one_gpu(3);
  EXPECT_THROW(build_tree(placements, 3, {}), std::invalid_argument);
  EXPECT_THROW(build_tree(placements, -1, {}), std::invalid_argument);
}

TEST(CollectiveTree, DescribesItsShapes) {
  EXPECT_EQ(describe({Shape::Flat, Shape::Chain, Shape::Binomial}), "gpu=flat,node=chain,nodes=binomial");
  for (const Shape shape : kShapes) {
    EXPECT_EQ(parse_shape(shape_name(shape)), shape);
  }
  EXPECT_FALSE(parse_shape("ring"));
}

// The segments tile the message exactly, in order.
void expect_tiles(const SegmentPlan& plan) {
  std::uint64_t next = 0;
  for (std::uint32_t i = 0; i < plan.count(); ++i) {
    const Segment segment = plan.segment(i);
    ASSERT_EQ(segment.offset, next);
    ASSERT_GT(segment.bytes, 0u);
    ASSERT_LE(segment.bytes, plan.segment_bytes());
    next += segment.bytes;
  }
  EXPECT_EQ(next, plan.bytes());
}

TEST(SegmentPlan, CutsEveryMessageIntoWholeElementsWithAShortLastSegment) {
  for (const std::uint64_t element : {1, 2, 4, 8, 12, 16}) {
    for (const std::uint64_t elements : {0, 1, 3, 255, 256, 4097, (1 << 22) + 3}) {
      for (const std::uint64_t wanted : {1, 16, 4096, 65536, 1 << 20}) {
        const SegmentPlan plan(elements * element, element, wanted);
        SCOPED_TRACE(element);
        EXPECT_EQ(plan.segment_bytes() % element, 0u);
        EXPECT_EQ(plan.segment_bytes() % 16, 0u);
        expect_tiles(plan);
      }
    }
  }
}

TEST(SegmentPlan, EdgeCases) {
  EXPECT_EQ(SegmentPlan(0, 4, 4096).count(), 0u); // zero bytes: no segment
  const SegmentPlan small(12, 4, 4096);           // smaller than a segment: one short one
  EXPECT_EQ(small.count(), 1u);
  EXPECT_EQ(small.segment(0).bytes, 12u);
  const SegmentPlan last(10000, 4, 4096); // 4096, 4096, 1808
  EXPECT_EQ(last.count(), 3u);
  EXPECT_EQ(last.segment(2).offset, 8192u);
  EXPECT_EQ(last.segment(2).bytes, 1808u);
  EXPECT_EQ(SegmentPlan(8192, 4, 4096).count(), 2u);        // exact multiple: no empty tail
  EXPECT_EQ(SegmentPlan(100, 12, 10).segment_bytes(), 48u); // at least one unit (lcm of 12 and 16)
  EXPECT_THROW(SegmentPlan(8, 0, 16), std::invalid_argument);
}

const auto all_fired = [](std::uint32_t) { return true; };

TEST(SegmentWindow, IssuesWhileUpstreamIsReadyAndTheWindowHasRoom) {
  SegmentWindow window(5, 2);
  EXPECT_FALSE(window.can_issue(0)); // nothing ready upstream
  EXPECT_TRUE(window.can_issue(1));
  EXPECT_EQ(window.issue(), 0u);
  EXPECT_FALSE(window.can_issue(1)); // segment 1 not ready
  EXPECT_TRUE(window.can_issue(5));
  EXPECT_EQ(window.issue(), 1u);
  EXPECT_FALSE(window.can_issue(5)); // two in flight: the window is full
  EXPECT_EQ(window.in_flight(), 2u);
  EXPECT_TRUE(window.poll(1, [](std::uint32_t index) { return index == 0; }));
  EXPECT_EQ(window.completed(), 1u);
  EXPECT_TRUE(window.can_issue(5));
  while (window.can_issue(5)) {
    window.issue();
    window.poll(1, [&](std::uint32_t index) { return index + 1 < window.issued(); });
  }
  EXPECT_EQ(window.issued(), 5u);
  EXPECT_FALSE(window.done());
  EXPECT_TRUE(window.poll(1, all_fired));
  EXPECT_TRUE(window.done());
  EXPECT_FALSE(window.poll(1, all_fired)); // nothing left to advance over
}

TEST(SegmentWindow, SegmentsGoRoundRobinOverTheStreams) {
  std::vector<std::uint32_t> streams;
  for (std::uint32_t index = 0; index < 7; ++index) {
    streams.push_back(stream_of_segment(index, 3));
  }
  EXPECT_EQ(streams, (std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(stream_of_segment(5, 1), 0u);
  EXPECT_EQ(stream_of_segment(5, 0), 0u); // no stream count: the one stream
}

TEST(SegmentWindow, CountsOnlyAPrefixOfFinishedSegments) {
  SegmentWindow window(6, 4);
  for (int i = 0; i < 4; ++i) {
    window.issue();
  }
  std::set<std::uint32_t> fired{1, 3}; // the second stream ran ahead
  const auto has_fired = [&](std::uint32_t index) { return fired.contains(index); };
  EXPECT_FALSE(window.poll(2, has_fired));
  EXPECT_EQ(window.completed(), 0u); // segment 0 still runs: 0..k-1 must all be ready
  EXPECT_FALSE(window.can_issue(6)); // and the window still counts four in flight
  fired.insert(0);
  EXPECT_TRUE(window.poll(2, has_fired));
  EXPECT_EQ(window.completed(), 2u); // 0 and 1; 3 finished but 2 has not
  EXPECT_EQ(window.in_flight(), 2u);
  window.issue();
  window.issue();
  fired.insert({2, 4, 5});
  EXPECT_TRUE(window.poll(2, has_fired));
  EXPECT_TRUE(window.done());
}

TEST(SegmentWindow, PollingStopsAStreamAtItsFirstSegmentStillRunning) {
  for (const std::uint32_t streams : {1u, 2u, 3u}) {
    SegmentWindow window(8, 8);
    for (int i = 0; i < 8; ++i) {
      window.issue();
    }
    std::vector<std::uint32_t> asked;
    window.poll(streams, [&](std::uint32_t index) {
      asked.push_back(index);
      return false;
    });
    std::vector<std::uint32_t> firsts(streams); // each stream's first segment, and no other
    std::iota(firsts.begin(), firsts.end(), 0u);
    EXPECT_EQ(asked, firsts) << streams << " streams";
  }
}

TEST(SegmentWindow, AFinishedSegmentIsNotAskedAgain) {
  SegmentWindow window(3, 3);
  for (int i = 0; i < 3; ++i) {
    window.issue();
  }
  window.poll(3, [](std::uint32_t index) { return index == 2; });
  std::vector<std::uint32_t> asked;
  window.poll(3, [&](std::uint32_t index) {
    asked.push_back(index);
    return true;
  });
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_TRUE(window.done());
}

// Streams finishing their segments in random interleavings: the counter a rank publishes never
// covers a segment that has not finished, and reaches every segment at the end.
TEST(SegmentWindow, PublishedCountersCoverOnlyFinishedSegments) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint32_t segments = 1 + random() % 40;
    const std::uint32_t streams = 1 + random() % 4;
    const std::uint32_t width = 1 + random() % 8;
    SegmentWindow window(segments, width);
    std::vector<bool> finished(segments, false);
    // Per stream, its segments in issue order: a stream finishes them in that order.
    std::vector<std::vector<std::uint32_t>> queued(streams);
    std::vector<std::size_t> next_to_finish(streams, 0);
    while (!window.done()) {
      while (window.can_issue(segments) && random() % 2 == 0) {
        const std::uint32_t index = window.issue();
        queued[stream_of_segment(index, streams)].push_back(index);
      }
      const std::uint32_t stream = random() % streams;
      if (next_to_finish[stream] < queued[stream].size()) {
        finished[queued[stream][next_to_finish[stream]++]] = true;
      }
      window.poll(streams, [&](std::uint32_t index) { return bool(finished[index]); });
      for (std::uint32_t index = 0; index < window.completed(); ++index) {
        ASSERT_TRUE(finished[index]) << "segment " << index << " counted before it finished";
      }
      ASSERT_LE(window.in_flight(), width);
    }
    EXPECT_EQ(window.completed(), segments);
  }
}

TEST(SegmentWindow, AWindowOfZeroActsAsOneAndNoSegmentsIsDoneAtOnce) {
  SegmentWindow one(3, 0);
  one.issue();
  EXPECT_FALSE(one.can_issue(3));
  EXPECT_TRUE(SegmentWindow(0, 4).done());
  EXPECT_FALSE(SegmentWindow(0, 4).can_issue(10));
}

} // namespace
} // namespace commlens::runtime::trees
