// What `commlens tune` makes of its measurements, from synthetic calls and timings.
#include "measured_rules.hpp"
#include "resident_rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

using namespace commlens::runtime::tuning;

constexpr MeasuredShape kFourGpus{GpuCount::More, false};

std::vector<CandidateTiming> timings(std::initializer_list<CandidateTiming> list) {
  return list;
}

TEST(MeasuredRules, FastestPerSizeWithRunsMergedIntoThresholdsAndTheirTimes) {
  const auto runs = winner_runs(timings({
      {8, "one_shot", 10'000},
      {8, "two_shot", 20'000},
      {1024, "one_shot", 12'000},
      {1024, "two_shot", 21'000},
      {65536, "one_shot", 40'000},
      {65536, "two_shot", 30'000},
      {1 << 20, "two_shot", 90'000},
      {1 << 20, "one_shot", 200'000},
  }));
  const std::vector<Rule> rules = allreduce_rules(runs, kFourGpus, false, 0, "allreduce");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].algorithm, AllreduceAlgorithm::OneShot);
  EXPECT_EQ(rules[0].max_bytes, 1024u);
  EXPECT_EQ(rules[0].why, "fastest measured from 8 B to 1 KiB");
  ASSERT_TRUE(rules[0].measured);
  EXPECT_EQ(rules[0].measured->measurement, "allreduce");
  ASSERT_EQ(rules[0].measured->points.size(), 2u);
  EXPECT_EQ(rules[0].measured->points[0], (MeasuredPoint{8, "one_shot", 10.0, "two_shot", 20.0}));
  EXPECT_EQ(rules[1].algorithm, AllreduceAlgorithm::TwoShot);
  // An allreduce rule stops at the largest size measured: above it the default rules decide.
  EXPECT_EQ(rules[1].max_bytes, 1u << 20);
  EXPECT_EQ(runs.back().max_bytes, std::nullopt); // the other operations' largest run covers the rest
  for (const Rule& rule : rules) {
    EXPECT_EQ(rule.gpus, GpuCount::More);
    EXPECT_EQ(rule.ranks_share_gpu, false);
    EXPECT_EQ(rule.in_place, false);
  }
}

TEST(MeasuredRules, AWinnerThatComesBackStartsANewRule) {
  const auto runs = winner_runs(timings({
      {8, "two_shot", 1},
      {8, "one_shot", 2},
      {16, "one_shot", 1},
      {16, "two_shot", 2},
      {32, "two_shot", 1},
      {32, "one_shot", 2},
  }));
  const std::vector<Rule> rules = allreduce_rules(runs, kFourGpus, true, 0, "m");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].max_bytes, 8u);
  EXPECT_EQ(rules[1].max_bytes, 16u);
  EXPECT_EQ(rules[2].algorithm, AllreduceAlgorithm::TwoShot);
  EXPECT_EQ(rules[2].in_place, true);
}

TEST(MeasuredRules, StripedRulesKeepTheirShareAndTiesGoToTheFirstName) {
  const auto runs = winner_runs(timings({
      {8, "two_shot", 5},
      {8, "one_shot", 5},
      {1 << 30, "one_shot", 3000},
      {1 << 30, "one_shot_striped", 2500},
  }));
  const std::vector<Rule> rules = allreduce_rules(runs, {GpuCount::Two, false}, false, 13, "m");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].algorithm, AllreduceAlgorithm::OneShot);
  EXPECT_EQ(rules[1].algorithm, AllreduceAlgorithm::OneShotStriped);
  EXPECT_EQ(rules[1].host_percent, 13u);
}

TEST(MeasuredRules, EachSizeTakesTheSlowestRanksMedian) {
  const std::vector<CandidateCall> calls = {// 8 B: rank 0's median 10 (one slow outlier), rank 1's 12.
                                            {8, 0, "a", 10},
                                            {8, 0, "a", 9},
                                            {8, 0, "a", 500},
                                            {8, 1, "a", 12},
                                            {8, 1, "a", 11},
                                            {8, 1, "a", 13},
                                            {8, 0, "b", 3},
                                            // 1 KiB: one rank only.
                                            {1024, 0, "a", 40}};
  const std::vector<CandidateTiming> result = candidate_timings(calls);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0].bytes, 8u);
  EXPECT_EQ(result[0].candidate, "a");
  EXPECT_EQ(result[0].median_ns, 12);
  EXPECT_EQ(result[1].candidate, "b");
  EXPECT_EQ(result[2].bytes, 1024u);
  EXPECT_EQ(result[2].median_ns, 40);
}

TEST(MeasuredRules, MovementAndTreeRulesFromTheirCandidateNames) {
  const auto movement = movement_rules(winner_runs(timings({{64, "direct", 5}, {64, "gpu_leader", 9}})),
                                       Collective::Alltoall, {GpuCount::One, true}, "data_movement");
  ASSERT_EQ(movement.size(), 1u);
  EXPECT_EQ(movement[0].collectives, std::vector{Collective::Alltoall});
  EXPECT_EQ(movement[0].algorithm, MovementAlgorithm::Direct);
  EXPECT_EQ(movement[0].ranks_share_gpu, true);
  // The host-staged baseline measured faster at small blocks: "staged" up to them.
  const auto staged = movement_rules(
      winner_runs(timings(
          {{64, "staged", 40}, {64, "direct", 300}, {1 << 20, "staged", 900}, {1 << 20, "direct", 600}})),
      Collective::Scatter, {GpuCount::One, true}, "data_movement");
  ASSERT_EQ(staged.size(), 2u);
  EXPECT_EQ(staged[0].algorithm, MovementAlgorithm::Staged);
  EXPECT_EQ(staged[0].max_block_bytes, 64u);
  EXPECT_EQ(staged[1].algorithm, MovementAlgorithm::Direct);
  const auto tree =
      tree_rules(winner_runs(timings(
                     {{4096, "tree:gpu=chain,node=binomial,nodes=flat:segment=65536:window=8", 5},
                      {4096, "tree:gpu=flat,node=binomial,nodes=binomial:segment=1048576:window=4", 7}})),
                 RootedCollective::Reduce, {GpuCount::One, true}, "trees");
  ASSERT_EQ(tree.size(), 1u);
  EXPECT_EQ(tree[0].collective, RootedCollective::Reduce);
  using commlens::runtime::trees::Shape;
  EXPECT_EQ(tree[0].shapes,
            (commlens::runtime::trees::LevelShapes{Shape::Chain, Shape::Binomial, Shape::Flat}));
  EXPECT_EQ(tree[0].segment_bytes, 65536u);
  EXPECT_EQ(tree[0].window, 8u);
  EXPECT_EQ(tree[0].streams, 1u); // no :streams= in the name: one stream
  EXPECT_EQ(tree[0].measured->points[0].runner_up_us, 0.01);
  EXPECT_FALSE(tree[0].push);
  EXPECT_EQ(tree[0].mps, false); // measured without MPS: applies without it only
  // A bcast whose flat tree pushed won, measured under MPS.
  const auto pushed =
      tree_rules(winner_runs(timings(
                     {{65536, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=2:push", 5},
                      {65536, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=2", 9}})),
                 RootedCollective::Bcast, {GpuCount::One, true, true}, "trees:mps");
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_TRUE(pushed[0].push);
  EXPECT_EQ(pushed[0].mps, true);
  // Several streams won: the rule keeps them (bounded as the table's parser bounds them).
  const auto streamed = tree_rules(
      winner_runs(timings(
          {{1 << 20, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=8:streams=4", 5},
           {1 << 20, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=8", 9},
           {1 << 22, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=8:streams=99", 5},
           {1 << 22, "tree:gpu=flat,node=binomial,nodes=binomial:segment=65536:window=8", 9}})),
      RootedCollective::Bcast, {GpuCount::One, true}, "trees");
  ASSERT_EQ(streamed.size(), 2u);
  EXPECT_EQ(streamed[0].streams, 4u);
  EXPECT_EQ(streamed[1].streams, kMaxStreams);
  EXPECT_THROW(tree_rules(winner_runs(timings(
                              {{8, "tree:gpu=flat,node=flat,nodes=flat:segment=4096:window=2:streams=", 1}})),
                          RootedCollective::Bcast, {GpuCount::One, true}, "t"),
               TableError);
  EXPECT_THROW(tree_rules(winner_runs(timings({{8, "host_staged", 1}})), RootedCollective::Bcast,
                          {GpuCount::One, true}, "t"),
               TableError);
  EXPECT_THROW(
      movement_rules(winner_runs(timings({{8, "ring", 1}})), Collective::Gather, {GpuCount::One, true}, "t"),
      TableError);
}

TEST(MeasuredRules, ANewMeasurementReplacesItsShapeAndKeepsTheOthersWithTheirMeasurements) {
  const Measurement shared{"allreduce:4ranks:1gpus", "H100", "h", 4, 1, true, "d", "c"};
  const Measurement pair{"allreduce:2ranks:2gpus", "H100", "h", 2, 2, false, "d", "c"};
  Table earlier;
  earlier.rules = {Rule{GpuCount::One, true, false, std::nullopt, AllreduceAlgorithm::TwoShot, 0, "old",
                        RuleMeasurement{shared.id, {{8, "a", 1, "", 0}}}},
                   Rule{GpuCount::Two, false, false, std::nullopt, AllreduceAlgorithm::OneShot, 0, "pair",
                        RuleMeasurement{pair.id, {{8, "a", 1, "", 0}}}},
                   Rule{GpuCount::More,
                        std::nullopt,
                        std::nullopt,
                        std::nullopt,
                        AllreduceAlgorithm::TwoShot,
                        0,
                        "reasoned",
                        {}}};
  TreeRule shared_tree;
  shared_tree.gpus = GpuCount::One;
  shared_tree.ranks_share_gpu = true;
  TreeRule pair_tree;
  pair_tree.gpus = GpuCount::Two;
  earlier.trees = {shared_tree, pair_tree};
  earlier.point_to_point.why = "kept";
  earlier.measurements = {shared, pair};
  Table measured;
  measured.rules = {Rule{GpuCount::One, true, false, std::nullopt, AllreduceAlgorithm::OneShot, 0, "new",
                         RuleMeasurement{shared.id, {{8, "a", 1, "", 0}}}}};
  measured.measurements = {shared};
  const Table merged = merge_measured(measured, earlier, {GpuCount::One, true});
  ASSERT_EQ(merged.rules.size(), 3u);
  EXPECT_EQ(merged.rules[0].why, "new");
  EXPECT_EQ(merged.rules[1].why, "pair");
  EXPECT_EQ(merged.rules[2].why, "reasoned");
  ASSERT_EQ(merged.trees.size(), 2u); // trees were not measured: their rules stay, whatever the shape
  EXPECT_EQ(merged.trees[0].gpus, GpuCount::One);
  EXPECT_EQ(merged.trees[1].gpus, GpuCount::Two);
  EXPECT_EQ(merged.point_to_point.why, "kept");
  EXPECT_EQ(merged.measurements, (std::vector{shared, pair}));
  EXPECT_EQ(parse_table(table_json(merged)).rules, merged.rules); // names only listed measurements
}

TEST(MeasuredRules, AMovementMeasurementReplacesOnlyTheRulesOfItsMpsSetting) {
  const MeasuredShape under_mps{GpuCount::One, true, true};
  const auto measured = movement_rules(winner_runs(timings({{64, "gpu_leader", 5}, {64, "staged", 9}})),
                                       Collective::Allgather, under_mps, "data_movement");
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].mps, true);
  Table earlier;
  earlier.data_movement = {
      {{Collective::Allgather}, GpuCount::One, true, false, 65536, MovementAlgorithm::Staged, "no mps", {}},
      {{Collective::Allgather}, GpuCount::One, true, true, 65536, MovementAlgorithm::Direct, "old mps", {}},
      {{}, GpuCount::Any, {}, {}, {}, MovementAlgorithm::Direct, "either", {}}};
  Table fresh;
  fresh.data_movement = measured;
  const Table merged = merge_measured(fresh, earlier, under_mps);
  ASSERT_EQ(merged.data_movement.size(), 3u);
  EXPECT_EQ(merged.data_movement[0].algorithm, MovementAlgorithm::GpuLeader);
  EXPECT_EQ(merged.data_movement[1].why, "no mps");
  EXPECT_EQ(merged.data_movement[2].why, "either");
}

TEST(MeasuredRules, MeasuringOneOperationKeepsTheOtherOperationsRulesOfTheSameShape) {
  const MeasuredShape under_mps{GpuCount::One, true, true};
  Table earlier;
  earlier.rules = {
      Rule{GpuCount::One, true, false, std::nullopt, AllreduceAlgorithm::OneShot, 0, "allreduce", {}}};
  TreeRule tree;
  tree.gpus = GpuCount::One;
  tree.ranks_share_gpu = true;
  earlier.trees = {tree};
  Table fresh;
  fresh.data_movement = movement_rules(winner_runs(timings({{64, "gpu_leader", 5}, {64, "staged", 9}})),
                                       Collective::Allgather, under_mps, "data_movement");
  const Table merged = merge_measured(fresh, earlier, under_mps);
  ASSERT_EQ(merged.rules.size(), 1u); // `commlens tune --ops data_movement` must not drop these
  EXPECT_EQ(merged.rules[0].why, "allreduce");
  EXPECT_EQ(merged.trees.size(), 1u);
  EXPECT_EQ(merged.data_movement.size(), 1u);
}

// One shape measured at 4, then 8, then 2 ranks into one file: every count's rules stay, each
// with the sizes nearer to it; measuring 4 again replaces only the 4-rank rules; a table measured
// at one count has no ranges, so it reads as before.
TEST(MeasuredRules, RankCountsOfOneShapeShareTheTableByNearestCount) {
  const auto measure_at = [](int ranks, AllreduceAlgorithm algorithm, const std::string& why) {
    const std::string id = "allreduce:" + std::to_string(ranks) + "ranks:1gpus";
    Table table;
    table.rules = {Rule{GpuCount::One, true, false, std::nullopt, algorithm, 0, why,
                        RuleMeasurement{id, {{8, "a", 1, "", 0}}}}};
    table.measurements = {Measurement{id, "H200", "h", ranks, 1, false, "d", "c"}};
    return std::pair{table, MeasuredShape{GpuCount::One, true, false, ranks}};
  };
  const auto merge_into = [](const Table& earlier, const std::pair<Table, MeasuredShape>& measured) {
    return parse_table(table_json(merge_measured(measured.first, earlier, measured.second)));
  };
  const auto [four, four_shape] = measure_at(4, AllreduceAlgorithm::OneShot, "four");
  Table table = merge_measured(four, Table{}, four_shape);
  ASSERT_EQ(table.rules.size(), 1u);
  EXPECT_EQ(table.rules[0].ranks, RankRange{});
  EXPECT_EQ(table_json(table).find("min_ranks"), std::string::npos);

  table = merge_into(table, measure_at(8, AllreduceAlgorithm::TwoShot, "eight"));
  table = merge_into(table, measure_at(2, AllreduceAlgorithm::OneShot, "two"));
  ASSERT_EQ(table.rules.size(), 3u);
  ASSERT_EQ(table.measurements.size(), 3u);
  const auto range_of = [&](const std::string& why) {
    return std::ranges::find(table.rules, why, &Rule::why)->ranks;
  };
  EXPECT_EQ(range_of("two"), (RankRange{std::nullopt, 3}));
  EXPECT_EQ(range_of("four"), (RankRange{4, 6}));
  EXPECT_EQ(range_of("eight"), (RankRange{7, std::nullopt}));
  const auto chosen = [&](int ranks) {
    for (const Rule& rule : table.rules) {
      if (rule.ranks.contains(ranks)) {
        return rule.why;
      }
    }
    return std::string("none");
  };
  EXPECT_EQ(chosen(2), "two");
  EXPECT_EQ(chosen(3), "two");
  EXPECT_EQ(chosen(4), "four");
  EXPECT_EQ(chosen(6), "four");
  EXPECT_EQ(chosen(7), "eight");
  EXPECT_EQ(chosen(64), "eight");
  // The runtime's choice follows the ranges (rules numbered from 1, before the defaults').
  const auto two_at = std::ranges::find(table.rules, "two", &Rule::why) - table.rules.begin();
  EXPECT_EQ(choose(table, "t", {3, 1, false, 1024}, {}).source, "table:t rule " + std::to_string(two_at + 1));

  table = merge_into(table, measure_at(4, AllreduceAlgorithm::TwoShot, "four again"));
  ASSERT_EQ(table.rules.size(), 3u);
  EXPECT_EQ(std::ranges::count(table.rules, "four", &Rule::why), 0);
  EXPECT_EQ(range_of("four again"), (RankRange{4, 6}));
  EXPECT_EQ(range_of("eight"), (RankRange{7, std::nullopt}));
}

TEST(MeasuredRules, RankRangesAreReadCheckedAndWritten) {
  const Table table = parse_table(R"({"format": 1, "rules": [{"algorithm": "one_shot", "min_ranks": 3,
      "max_ranks": 5}], "trees": [{"max_ranks": 2}], "data_movement": [{"algorithm": "direct", "min_ranks": 9}]})");
  EXPECT_EQ(table.rules[0].ranks, (RankRange{3, 5}));
  EXPECT_EQ(table.trees[0].ranks, (RankRange{std::nullopt, 2}));
  EXPECT_EQ(table.data_movement[0].ranks, (RankRange{9, std::nullopt}));
  const Table again = parse_table(table_json(table));
  EXPECT_EQ(again.rules, table.rules);
  EXPECT_EQ(again.trees, table.trees);
  EXPECT_EQ(again.data_movement, table.data_movement);
  EXPECT_FALSE(table.data_movement[0].ranks.contains(8));
  EXPECT_TRUE(table.data_movement[0].ranks.contains(9));
  for (const char* bad : {R"("min_ranks": 0)", R"("max_ranks": -1)", R"("min_ranks": 5, "max_ranks": 4)",
                          R"("min_ranks": "4")"}) {
    EXPECT_THROW(
        parse_table(std::string(R"({"format": 1, "rules": [{"algorithm": "one_shot", )") + bad + "}]}"),
        TableError)
        << bad;
  }
}

TEST(MeasuredRules, NoTimingsNoRules) {
  EXPECT_TRUE(winner_runs({}).empty());
}

} // namespace

namespace {

// The resident kernel's limit per collective: the largest size it won.
TEST(ResidentRules, TheKernelsLimitIsTheLargestSizeItWon) {
  const auto runs = winner_runs(timings({
      {8, "resident", 14'000},
      {8, "table", 22'000},
      {16, "resident", 19'000}, // a near tie lost below the limit does not cut it short
      {16, "table", 18'000},
      {16384, "resident", 20'000},
      {16384, "table", 24'000},
      {65536, "resident", 30'000},
      {65536, "table", 22'000},
  }));
  const ResidentRule rule = resident_rule(runs, "allreduce", "resident:2ranks:1gpus:mps");
  EXPECT_EQ(rule.collective, "allreduce");
  EXPECT_EQ(rule.max_bytes, 16384u);
  EXPECT_EQ(rule.why, "resident kernel fastest up to 16 KiB (at 2 of the 3 sizes measured up to it)");
  ASSERT_TRUE(rule.measured);
  EXPECT_EQ(rule.measured->measurement, "resident:2ranks:1gpus:mps");
  ASSERT_EQ(rule.measured->points.size(), 4u); // every size, not only the kernel's
  EXPECT_EQ(rule.measured->points[3], (MeasuredPoint{65536, "table", 22.0, "resident", 30.0}));

  // Winning the largest size measured: up to it; winning none: none.
  const auto everywhere = winner_runs(timings({{8, "resident", 1'000}, {8, "table", 2'000}}));
  EXPECT_EQ(resident_rule(everywhere, "bcast", "m").max_bytes, 8u);
  const auto nowhere = winner_runs(timings({{8, "resident", 3'000}, {8, "table", 2'000}}));
  const ResidentRule never = resident_rule(nowhere, "gather", "m");
  EXPECT_EQ(never.max_bytes, 0u);
  EXPECT_EQ(never.why, "the table's algorithms fastest at every size measured");
  EXPECT_THROW(resident_rule(winner_runs(timings({{8, "one_shot", 1}})), "bcast", "m"), TableError);
}

TEST(ResidentRules, LimitsByCollectiveAndRankCountReadBackAndMergeByRankCount) {
  const Table table = parse_table(R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [
      {"collective": "allreduce", "max_bytes": 65536, "max_ranks": 3},
      {"collective": "allreduce", "max_bytes": 0, "min_ranks": 4},
      {"collective": "alltoall", "max_bytes": 4096, "why": "w"}]})");
  ASSERT_EQ(table.resident.size(), 3u);
  EXPECT_EQ(parse_table(table_json(table)).resident, table.resident);
  EXPECT_EQ(resident_limit(table, "allreduce", 2).max_bytes, 65536u);
  EXPECT_EQ(resident_limit(table, "allreduce", 2).rule, 1u);
  EXPECT_EQ(resident_limit(table, "allreduce", 8).max_bytes, 0u);
  EXPECT_EQ(resident_limit_source("h100", resident_limit(table, "allreduce", 8)),
            "table:h100 resident rule 2");
  EXPECT_EQ(resident_limit(table, "alltoall", 5).max_bytes, 4096u);
  // No rule: the allreduce's built-in limit, every other collective the setting's.
  EXPECT_EQ(resident_limit(Table{}, "allreduce", 4).max_bytes, kDefaultResidentAllreduceBytes);
  EXPECT_EQ(resident_limit(table, "bcast", 4).max_bytes, ~std::uint64_t{0});
  EXPECT_EQ(resident_limit_source("h100", resident_limit(table, "bcast", 4)), "default");

  // Measured at 2 ranks then at 8: each count's rules get the sizes nearer to it.
  const auto measure_at = [](int ranks, std::uint64_t max_bytes) {
    const std::string id = "resident:" + std::to_string(ranks) + "ranks:1gpus:mps";
    Table measured;
    measured.resident = {
        ResidentRule{"bcast", max_bytes, "w", RuleMeasurement{id, {{8, "resident", 1, "", 0}}}}};
    measured.measurements = {Measurement{id, "H100", "h", ranks, 1, true, "d", "c"}};
    return std::pair{measured, MeasuredShape{GpuCount::One, true, true, ranks}};
  };
  const auto [two, two_shape] = measure_at(2, 65536);
  const auto [eight, eight_shape] = measure_at(8, 262144);
  Table merged = merge_measured(eight, merge_measured(two, Table{}, two_shape), eight_shape);
  merged.rules = {Rule{}};
  merged = parse_table(table_json(merged));
  ASSERT_EQ(merged.resident.size(), 2u);
  EXPECT_EQ(resident_limit(merged, "bcast", 2).max_bytes, 65536u);
  EXPECT_EQ(resident_limit(merged, "bcast", 5).max_bytes, 65536u);
  EXPECT_EQ(resident_limit(merged, "bcast", 6).max_bytes, 262144u);
}

} // namespace
