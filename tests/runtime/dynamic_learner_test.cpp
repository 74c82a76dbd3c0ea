// Dynamic selection's learner and candidates, on a simulated cost model: ranks that each time
// their calls with their own noise, agree per round on the slowest rank's medians (as the runtime
// does with one allreduce), and must converge to within 5 % of the best candidate's cost.
#include "dynamic_candidates.hpp"
#include "dynamic_learner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace commlens::runtime::tuning {
namespace {

// A steady workload: each candidate's true cost, each rank's measurement of a call that cost
// multiplied by lognormal noise, now and then a spike (a preempted rank).
struct CostModel {
  std::vector<double> costs;
  double spread = 0.10;
  double spike_chance = 0.05;
  double spike_factor = 5.0;
};

struct Simulation {
  std::vector<BucketLearner> ranks;
  std::vector<std::mt19937_64> noise;
  std::vector<std::size_t> chosen;     // the candidate of every call
  std::vector<double> call_costs;      // the slowest rank's time of every call
  std::size_t first_decision_call = 0; // index of the first call after the first decision
  std::vector<std::size_t> winners;    // the winner of every decision

  Simulation(int rank_count, std::size_t candidates, const LearnerSettings& settings) {
    for (int rank = 0; rank < rank_count; ++rank) {
      ranks.emplace_back(candidates, settings);
      noise.emplace_back(1234 + rank);
    }
  }

  void run(const CostModel& model, int calls) {
    for (int call = 0; call < calls; ++call) {
      const LearnerTurn turn = ranks[0].next();
      double slowest = 0;
      for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        ASSERT_EQ(ranks[rank].next().candidate, turn.candidate) << "ranks disagree at call " << call;
        std::lognormal_distribution<double> jitter(0.0, model.spread);
        std::bernoulli_distribution spike(model.spike_chance);
        double time = model.costs[turn.candidate] * jitter(noise[rank]);
        if (spike(noise[rank])) {
          time *= model.spike_factor;
        }
        ranks[rank].record(time);
        slowest = std::max(slowest, time);
      }
      chosen.push_back(turn.candidate);
      call_costs.push_back(model.costs[turn.candidate]);
      if (ranks[0].round_complete()) {
        std::vector<double> agreed(ranks[0].candidates(), 0.0);
        for (const BucketLearner& rank : ranks) {
          const std::vector<double> medians = rank.round_medians();
          std::transform(agreed.begin(), agreed.end(), medians.begin(), agreed.begin(),
                         [](double a, double b) { return std::max(a, b); });
        }
        for (BucketLearner& rank : ranks) {
          rank.decide(agreed);
        }
        winners.push_back(ranks[0].best());
        if (first_decision_call == 0) {
          first_decision_call = call_costs.size();
        }
      }
    }
  }

  double mean_cost_from(std::size_t first) const {
    double total = 0;
    for (std::size_t index = first; index < call_costs.size(); ++index) {
      total += call_costs[index];
    }
    return total / static_cast<double>(call_costs.size() - first);
  }
};

TEST(DynamicLearner, ConvergesWithinFivePercentOfTheBestOnASteadyNoisyWorkload) {
  const CostModel model{{130.0, 100.0, 400.0}};
  Simulation simulation(4, model.costs.size(), LearnerSettings{});
  simulation.run(model, 2000);
  ASSERT_GT(simulation.first_decision_call, 0u);
  EXPECT_EQ(simulation.ranks[0].best(), 1u);
  const double mean = simulation.mean_cost_from(simulation.first_decision_call);
  EXPECT_LT(mean, 100.0 * 1.05) << "mean cost after convergence " << mean;
  // The benchmark's horizon: 200 calls of one size, the mean after the first decision.
  Simulation short_run(4, model.costs.size(), LearnerSettings{});
  short_run.run(model, 200);
  EXPECT_LT(short_run.mean_cost_from(short_run.first_decision_call), 100.0 * 1.05);
}

TEST(DynamicLearner, MediansIgnoreSpikesOnTheBestCandidate) {
  // Every rank's best candidate is spiked often; the median of three trials still sees through it
  // in most rounds, so the runs pick the best candidate far more often than the runner-up.
  CostModel model{{100.0, 115.0}};
  model.spike_chance = 0.15;
  int right = 0;
  for (int seed = 0; seed < 20; ++seed) {
    Simulation simulation(2, 2, LearnerSettings{});
    simulation.noise = {std::mt19937_64(seed), std::mt19937_64(seed + 100)};
    simulation.run(model, 400);
    right += simulation.ranks[0].best() == 0 ? 1 : 0;
  }
  EXPECT_GE(right, 16);
}

TEST(DynamicLearner, FollowsAWorkloadWhoseBestCandidateChanges) {
  Simulation simulation(2, 2, LearnerSettings{});
  simulation.run({{100.0, 200.0}}, 300);
  EXPECT_EQ(simulation.ranks[0].best(), 0u);
  simulation.run({{300.0, 200.0}}, 600);
  EXPECT_EQ(simulation.ranks[0].best(), 1u);
}

TEST(DynamicLearner, NearlyEqualCandidatesCostNothingAndKeepRechecksRare) {
  // 1 % apart, under 10 % noise: the winner may change, which costs nothing here, but most
  // re-checks confirm it (the 3 % margin), so the stretches between them still grow.
  Simulation simulation(4, 2, LearnerSettings{});
  simulation.run({{100.0, 101.0}}, 3000);
  int switches = 0;
  for (std::size_t decision = 1; decision < simulation.winners.size(); ++decision) {
    switches += simulation.winners[decision] != simulation.winners[decision - 1] ? 1 : 0;
  }
  EXPECT_LT(switches * 3, static_cast<int>(simulation.winners.size()));
  EXPECT_LT(simulation.winners.size(), 30u); // rounds of 6 calls between stretches of 64 to 4096
  EXPECT_LT(simulation.mean_cost_from(simulation.first_decision_call), 101.0);
}

TEST(DynamicLearner, FarSlowerCandidatesAreRecheckedOnlyNowAndThen) {
  const LearnerSettings settings{.trials = 1, .first_exploit = 1, .longest_exploit = 1};
  BucketLearner learner(3, settings);
  for (const double time : {100.0, 120.0, 900.0}) {
    learner.record(time);
  }
  learner.decide(learner.round_medians());
  learner.record(100); // the one exploiting call
  // Re-check 1: the 9x candidate is left out and keeps its figure.
  EXPECT_EQ(learner.next().candidate, 0u);
  learner.record(100);
  EXPECT_EQ(learner.next().candidate, 1u);
  learner.record(120);
  ASSERT_TRUE(learner.round_complete());
  EXPECT_EQ(learner.round_medians(), (std::vector<double>{100.0, 120.0, 900.0}));
  learner.decide(learner.round_medians());
  // Re-checks 2 and 3 leave it out too; re-check 4 measures every candidate again.
  for (int recheck = 2; recheck <= 4; ++recheck) {
    learner.record(100);
    std::size_t measured = 0;
    while (!learner.round_complete()) {
      learner.record(100);
      ++measured;
    }
    EXPECT_EQ(measured, recheck == 4 ? 3u : 2u) << "re-check " << recheck;
    learner.decide(learner.round_medians());
  }
}

TEST(DynamicLearner, ACallThatDidNotRunDoesNotAdvanceTheSchedule) {
  BucketLearner learner(3, LearnerSettings{});
  EXPECT_EQ(learner.next().candidate, 0u);
  EXPECT_EQ(learner.next().phase, LearnerPhase::Explore);
  learner.record(10);
  EXPECT_EQ(learner.next().candidate, 1u);
  EXPECT_EQ(learner.next().candidate, 1u); // asked again (the call went to the baseline)
  EXPECT_FALSE(learner.round_complete());
}

TEST(DynamicLearner, ExploitsThenRechecksEveryCandidate) {
  const LearnerSettings settings{.trials = 1, .first_exploit = 2, .longest_exploit = 4};
  BucketLearner learner(2, settings);
  learner.record(30);
  learner.record(20);
  ASSERT_TRUE(learner.round_complete());
  learner.decide(learner.round_medians());
  EXPECT_EQ(learner.best(), 1u);
  EXPECT_EQ(learner.next().phase, LearnerPhase::Exploit);
  EXPECT_EQ(learner.describe(learner.next()), "dynamic exploit 2 (0.0 us, check in 2)");
  learner.record(20);
  learner.record(20);
  EXPECT_EQ(learner.next().phase, LearnerPhase::Recheck);
  EXPECT_EQ(learner.describe(learner.next()), "dynamic recheck 1 of 2");
  learner.record(30);
  learner.record(20);
  learner.decide(learner.round_medians());
  EXPECT_EQ(learner.exploit_left(), 4u); // confirmed: the stretch doubled
  EXPECT_THROW(learner.decide(std::vector<double>{1.0}), std::invalid_argument);
}

TEST(DynamicLearner, RegistryKeepsOneLearnerPerKey) {
  LearnerRegistry registry;
  BucketLearner& first = registry.learner({1, 2, 0, 10}, 2);
  first.record(5);
  EXPECT_EQ(&registry.learner({1, 2, 0, 10}, 2), &first);
  EXPECT_NE(&registry.learner({1, 2, 0, 11}, 2), &first);
  EXPECT_EQ(registry.learner({1, 2, 0, 10}, 3).candidates(), 3u); // another candidate count: made anew
}

TEST(DynamicLearner, SizeBucketsArePowersOfTwo) {
  EXPECT_EQ(size_bucket(0), 0u);
  EXPECT_EQ(size_bucket(1), 0u);
  EXPECT_EQ(size_bucket(8), 3u);
  EXPECT_EQ(size_bucket(65535), 15u);
  EXPECT_EQ(size_bucket(65536), 16u);
  EXPECT_EQ(bucket_floor(100000), 65536u);
}

TEST(DynamicCandidates, AllreduceTriesOnlySafeAlgorithms) {
  auto names = [](const std::vector<Choice>& choices) {
    std::vector<AllreduceAlgorithm> algorithms;
    for (const Choice& choice : choices) {
      algorithms.push_back(choice.algorithm);
    }
    return algorithms;
  };
  EXPECT_EQ(names(allreduce_candidates({4, 1, false, 64}, {})),
            (std::vector{AllreduceAlgorithm::OneShot, AllreduceAlgorithm::TwoShot}));
  EXPECT_EQ(names(allreduce_candidates({4, 2, true, 64}, {})), (std::vector{AllreduceAlgorithm::TwoShot}));
  EXPECT_EQ(names(allreduce_candidates({2, 2, false, 64}, {.host_percent = 10})),
            (std::vector{AllreduceAlgorithm::OneShot, AllreduceAlgorithm::TwoShot,
                         AllreduceAlgorithm::OneShotStriped}));
  EXPECT_EQ(allreduce_candidates({2, 2, false, 64}, {.host_percent = 10}).back().host_percent, 10u);
}

TEST(DynamicCandidates, GpuLeaderWhereRanksShareGpusAndItDiffersStagedAlways) {
  using enum MovementAlgorithm;
  for (const Collective collective : {Collective::Allgather, Collective::Scatter, Collective::Alltoall,
                                      Collective::ReduceScatterBlock, Collective::ReduceScatter}) {
    EXPECT_EQ(movement_candidates({collective, 4, 1, 64}), (std::vector{Direct, GpuLeader, Staged}))
        << collective_name(collective);
    EXPECT_EQ(movement_candidates({collective, 4, 2, 64}), (std::vector{Direct, GpuLeader, Staged}));
    EXPECT_EQ(movement_candidates({collective, 4, 4, 64}), (std::vector{Direct, Staged}));
  }
  // gather's root pulls every block in either: one context already.
  EXPECT_EQ(movement_candidates({Collective::Gather, 4, 1, 64}), (std::vector{Direct, Staged}));
}

TEST(DynamicCandidates, TreeSettingsDependOnTheBucketOnlyAndAreDistinct) {
  const Table table = parse_table(R"({"format": 1, "gpu": "x", "rules": [{"algorithm": "one_shot"}]})");
  const auto small = tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, 5000});
  EXPECT_EQ(small.size(), 4u); // every segment size covers 4 KiB: one per shape, and the flat push
  EXPECT_EQ(small.front().source, "fallback");
  EXPECT_EQ(std::ranges::count_if(small, [](const TreeChoice& choice) { return choice.push; }), 1);
  EXPECT_TRUE(std::ranges::all_of(small, [](const TreeChoice& choice) {
    return !choice.push || choice.shapes.gpu == trees::Shape::Flat;
  }));
  const auto large = tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, std::uint64_t{5} << 20});
  EXPECT_EQ(large.size(), 9u); // the table's, three shapes with two segment sizes each, the flat push's two
  // A reduce has nothing to push, nor has a bcast whose ranks each have a GPU of their own.
  EXPECT_EQ(tree_candidates(table, "t", {RootedCollective::Reduce, 4, 1, std::uint64_t{5} << 20}).size(), 7u);
  EXPECT_TRUE(std::ranges::none_of(tree_candidates(table, "t", {RootedCollective::Bcast, 4, 4, 1 << 20}),
                                   [](const TreeChoice& choice) { return choice.push; }));
  const auto same_bucket =
      tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, std::uint64_t{6} << 20});
  ASSERT_EQ(same_bucket.size(), large.size());
  for (std::size_t index = 0; index < large.size(); ++index) {
    EXPECT_EQ(same_bucket[index].shapes, large[index].shapes);
    EXPECT_EQ(same_bucket[index].segment_bytes, large[index].segment_bytes);
  }
  // What tune sweeps: three shapes, three segment sizes, two windows, one, two or four streams, and
  // the table's choice; for a message of one segment neither the window nor the streams make a
  // difference.
  EXPECT_EQ(tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, 5000}, TreeBreadth::Sweep).size(),
            4u); // one per shape, and the flat push
  // Large messages (4 MiB bucket): per shape, 64 KiB and 256 KiB segments with 2 in flight on 1 or
  // 2 streams (4 are 2 then) and 8 in flight on 1, 2 or 4; 1 MiB segments the same with 4 in
  // flight instead of 8: 15 per shape, the flat push's 15, and the table's choice.
  const auto swept = tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, std::uint64_t{5} << 20},
                                     TreeBreadth::Sweep);
  EXPECT_EQ(swept.size(), 61u);
  EXPECT_TRUE(std::ranges::any_of(swept, [](const TreeChoice& choice) { return choice.streams == 4; }));
  EXPECT_TRUE(std::ranges::any_of(
      swept, [](const TreeChoice& choice) { return choice.push && choice.streams == 4; }));
  EXPECT_EQ(tree_candidates(table, "t", {RootedCollective::Reduce, 4, 1, std::uint64_t{5} << 20},
                            TreeBreadth::Sweep)
                .size(),
            46u);
  // Dynamic selection keeps the table's streams.
  for (const TreeChoice& choice : tree_candidates(
           table, "t", {RootedCollective::Bcast, 4, 1, std::uint64_t{5} << 20}, TreeBreadth::Dynamic)) {
    EXPECT_EQ(choice.streams, 1u);
  }
  // Ranks on several GPUs: tune also sweeps 4 and 16 MiB segments; ranks on one GPU and Dynamic
  // selection do not.
  const auto has_segment = [](const std::vector<TreeChoice>& choices, std::uint64_t bytes) {
    return std::ranges::any_of(choices,
                               [&](const TreeChoice& choice) { return choice.segment_bytes == bytes; });
  };
  const std::uint64_t large_message = std::uint64_t{64} << 20;
  for (const std::uint64_t segment : {std::uint64_t{4} << 20, std::uint64_t{16} << 20}) {
    EXPECT_TRUE(has_segment(
        tree_candidates(table, "t", {RootedCollective::Bcast, 2, 2, large_message}, TreeBreadth::Sweep),
        segment));
    EXPECT_FALSE(has_segment(
        tree_candidates(table, "t", {RootedCollective::Bcast, 4, 1, large_message}, TreeBreadth::Sweep),
        segment));
    EXPECT_FALSE(
        has_segment(tree_candidates(table, "t", {RootedCollective::Bcast, 2, 2, large_message}), segment));
  }
  // Several GPUs: the node level varies, the GPU level keeps the table's shape.
  for (const TreeChoice& choice : tree_candidates(table, "t", {RootedCollective::Reduce, 4, 2, 1 << 20})) {
    EXPECT_EQ(choice.shapes.gpu, trees::Shape::Flat);
  }
}

} // namespace
} // namespace commlens::runtime::tuning
