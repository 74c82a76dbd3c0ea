// The runtime's selection model (runtime/selection/selector.hpp): every rule of choice in one
// place, checked on the decisions themselves, without a GPU.
#include "selector.hpp"

#include "runtime_collective_names.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using commlens::runtime::selection::CallShape;
using commlens::runtime::selection::Decision;
using commlens::runtime::selection::EngineFacts;
using commlens::runtime::selection::Family;
using commlens::runtime::selection::Route;
using commlens::runtime::selection::SelectionSettings;
using commlens::runtime::selection::Selector;
namespace tuning = commlens::runtime::tuning;

constexpr EngineFacts kTwoGpus{.ranks = 2, .gpus = 2};
constexpr EngineFacts kFourRanksUnderMpsOnOneGpu{.ranks = 4, .gpus = 1, .mps = true};

// A table whose one rule stripes two-rank calls over the host path (20 %).
tuning::NamedTable striping_table() {
  tuning::Table table;
  table.rules.push_back({.gpus = tuning::GpuCount::Two,
                         .algorithm = tuning::AllreduceAlgorithm::OneShotStriped,
                         .host_percent = 20});
  return {table, "test"};
}

CallShape allreduce(std::uint64_t bytes) {
  return {
      .family = Family::Allreduce, .collective = "allreduce", .bytes = bytes, .comm_id = 1, .function = 7};
}

SelectionSettings resident_settings() {
  return {.resident_bytes = 262144, .resident_max_ranks = 8};
}

TEST(Selector, ACommunicatorSpanningNodesRunsTheHierarchicalAlgorithm) {
  Selector selector(striping_table(), {});
  const Decision decision = selector.decide(allreduce(1 << 20), {.ranks = 8, .gpus = 8, .spans_nodes = true});
  EXPECT_EQ(decision.route, Route::Allreduce);
  EXPECT_EQ(decision.allreduce, tuning::AllreduceAlgorithm::Hierarchical);
  EXPECT_EQ(decision.streams, 3U);
  EXPECT_EQ(decision.source, "rule: communicator spans nodes");
}

TEST(Selector, TheTablesRuleChoosesAndTheStripedAlgorithmCarriesItsHostShare) {
  Selector selector(striping_table(), {});
  const Decision decision = selector.decide(allreduce(64 << 20), kTwoGpus);
  EXPECT_EQ(decision.allreduce, tuning::AllreduceAlgorithm::OneShotStriped);
  EXPECT_EQ(decision.host_percent, 20U);
  EXPECT_EQ(decision.streams, 3U);
  EXPECT_EQ(decision.source, "table:test rule 1");
  EXPECT_FALSE(decision.dynamic);
}

TEST(Selector, WithoutAHostPathTheStripedAlgorithmRunsAsOneShotAndSaysSo) {
  Selector selector(striping_table(), {});
  Decision decision = selector.decide(allreduce(64 << 20), kTwoGpus);
  Selector::without_host_path(decision);
  EXPECT_EQ(decision.allreduce, tuning::AllreduceAlgorithm::OneShot);
  EXPECT_EQ(decision.host_percent, 0U);
  EXPECT_EQ(decision.streams, 1U);
  EXPECT_EQ(decision.source, "table:test rule 1 (host path unavailable: one_shot)");
}

TEST(Selector, ANonblockingCallRunsTheStripedRuleAsOneShot) {
  Selector selector(striping_table(), {});
  CallShape call = allreduce(64 << 20);
  call.on_lane = true;
  const Decision decision = selector.decide(call, kTwoGpus);
  EXPECT_EQ(decision.allreduce, tuning::AllreduceAlgorithm::OneShot);
  EXPECT_EQ(decision.source, "table:test rule 1 (nonblocking: one_shot)");
}

TEST(Selector, WithoutARuleInPlaceOnSeveralGpusIsTwoShotAndRanksSharingGpusShareOneShot) {
  Selector selector({tuning::Table{}, "empty"}, {});
  CallShape in_place = allreduce(4096);
  in_place.in_place = true;
  EXPECT_EQ(selector.decide(in_place, kTwoGpus).allreduce, tuning::AllreduceAlgorithm::TwoShot);
  const Decision shared = selector.decide(allreduce(4096), {.ranks = 4, .gpus = 2});
  EXPECT_EQ(shared.allreduce, tuning::AllreduceAlgorithm::OneShot);
  EXPECT_TRUE(shared.shared_gpu);
  EXPECT_EQ(shared.source, "fallback");
}

TEST(Selector, SmallCallsOfRanksSharingOneGpuUnderMpsGoToTheResidentKernel) {
  Selector selector({tuning::Table{}, "empty"}, resident_settings());
  CallShape call = allreduce(4096);
  call.resident_contribution = 4096;
  const Decision decision = selector.decide(call, kFourRanksUnderMpsOnOneGpu);
  EXPECT_EQ(decision.route, Route::Resident);
  EXPECT_EQ(decision.resident_cap, tuning::kDefaultResidentAllreduceBytes);
  EXPECT_EQ(decision.source,
            "default: ranks sharing one GPU under MPS, a rank's contribution at most 16384 bytes");
}

TEST(Selector, TheResidentKernelIsLeftOutAboveItsLimitWithoutMpsOrWhenNotAsked) {
  Selector selector({tuning::Table{}, "empty"}, resident_settings());
  CallShape large = allreduce(tuning::kDefaultResidentAllreduceBytes + 4);
  large.resident_contribution = large.bytes;
  EXPECT_EQ(selector.decide(large, kFourRanksUnderMpsOnOneGpu).route, Route::Allreduce);
  CallShape small = allreduce(4096);
  small.resident_contribution = 4096;
  EXPECT_EQ(selector.decide(small, {.ranks = 4, .gpus = 1, .mps = false}).route, Route::Allreduce);
  small.resident_contribution = 0; // the kernel could not start: decide again without it
  EXPECT_EQ(selector.decide(small, kFourRanksUnderMpsOnOneGpu).route, Route::Allreduce);
}

TEST(Selector, AForcedAlgorithmRunsWhereSafeAndKeepsTheResidentKernelOut) {
  SelectionSettings settings = resident_settings();
  settings.allreduce.forced = tuning::AllreduceAlgorithm::TwoShot;
  Selector selector({tuning::Table{}, "empty"}, settings);
  CallShape call = allreduce(4096);
  call.resident_contribution = 4096;
  const Decision decision = selector.decide(call, kFourRanksUnderMpsOnOneGpu);
  EXPECT_EQ(decision.route, Route::Allreduce);
  EXPECT_EQ(decision.allreduce, tuning::AllreduceAlgorithm::TwoShot);
  EXPECT_EQ(decision.source, "forced");
}

TEST(Selector, DynamicSelectionGivesBlockingCallsOfAKnownCommunicatorALearnersTurn) {
  Selector selector({tuning::Table{}, "empty"}, {.dynamic = true});
  const EngineFacts four_gpus{.ranks = 4, .gpus = 4};
  const Decision first = selector.decide(allreduce(1 << 20), four_gpus);
  ASSERT_TRUE(first.dynamic);
  EXPECT_NE(first.source.find("explore"), std::string::npos) << first.source;
  CallShape no_communicator = allreduce(1 << 20);
  no_communicator.comm_id = -1;
  EXPECT_FALSE(selector.decide(no_communicator, four_gpus).dynamic);
  CallShape on_lane = allreduce(1 << 20);
  on_lane.on_lane = true;
  EXPECT_FALSE(selector.decide(on_lane, four_gpus).dynamic);
}

TEST(Selector, TheTreeStreamsSettingOverridesTheTablesStreams) {
  Selector selector({tuning::Table{}, "empty"}, {.tree_streams = 3});
  const Decision decision = selector.decide({.family = Family::Tree,
                                             .collective = "bcast",
                                             .rooted = tuning::RootedCollective::Bcast,
                                             .bytes = 1 << 20},
                                            {.ranks = 4, .gpus = 4});
  EXPECT_EQ(decision.route, Route::Tree);
  EXPECT_EQ(decision.tree.streams, 3U);
  EXPECT_EQ(decision.source, decision.tree.source);
}

TEST(Selector, ADataMovementCallWithoutARuleRunsDirect) {
  Selector selector({tuning::Table{}, "empty"}, {});
  const Decision decision = selector.decide({.family = Family::Movement,
                                             .collective = "allgather",
                                             .movement = tuning::Collective::Allgather,
                                             .bytes = 4 << 20,
                                             .block_bytes = 1 << 20},
                                            {.ranks = 4, .gpus = 4});
  EXPECT_EQ(decision.route, Route::Movement);
  EXPECT_EQ(decision.movement, tuning::MovementAlgorithm::Direct);
  EXPECT_EQ(decision.source, "fallback");
}

TEST(Selector, EveryCollectiveTheSelectionNamesIsABlockingRuntimeCollectiveOfTheSpec) {
  const auto generated = [](std::string_view name) {
    return std::ranges::find(commlens::contract::kBlockingRuntimeCollectives, name) !=
           std::end(commlens::contract::kBlockingRuntimeCollectives);
  };
  for (const tuning::Collective collective : tuning::kCollectives) {
    EXPECT_TRUE(generated(tuning::collective_name(collective))) << tuning::collective_name(collective);
  }
  for (const tuning::RootedCollective rooted :
       {tuning::RootedCollective::Bcast, tuning::RootedCollective::Reduce}) {
    EXPECT_TRUE(generated(tuning::collective_name(rooted))) << tuning::collective_name(rooted);
  }
  EXPECT_TRUE(generated("allreduce"));
}

} // namespace
