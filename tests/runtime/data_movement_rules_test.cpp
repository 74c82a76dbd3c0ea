// The tuning table's "data_movement" rules (runtime/tuning/data_movement_rules.hpp): parsing with
// errors that name the field, the JSON round trip, first-match selection by collective, GPUs,
// sharing and block size, every algorithm for every collective, and the shipped tables.
#include "shipped_tables.hpp"
#include "tuning_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace commlens::runtime::tuning {
namespace {

std::string table_with(const std::string& movement) {
  return R"({"format": 1, "gpu": "test", "rules": [{"algorithm": "one_shot"}], "data_movement": )" +
         movement + "}";
}

TEST(DataMovementRules, ParsesEveryFieldAndRoundTripsThroughJson) {
  const Table table = parse_table(table_with(R"([
    {"collectives": ["allgather", "reduce_scatter"], "gpus": "one", "ranks_share_gpu": true,
     "max_block_bytes": 4096, "algorithm": "gpu_leader", "why": "small"},
    {"algorithm": "direct"}])"));
  ASSERT_EQ(table.data_movement.size(), 2u);
  const MovementRule& first = table.data_movement[0];
  EXPECT_EQ(first.collectives, (std::vector<Collective>{Collective::Allgather, Collective::ReduceScatter}));
  EXPECT_EQ(first.gpus, GpuCount::One);
  EXPECT_EQ(first.ranks_share_gpu, true);
  EXPECT_EQ(first.max_block_bytes, 4096u);
  EXPECT_EQ(first.algorithm, MovementAlgorithm::GpuLeader);
  EXPECT_EQ(first.why, "small");
  const MovementRule& second = table.data_movement[1];
  EXPECT_TRUE(second.collectives.empty());
  EXPECT_EQ(second.gpus, GpuCount::Any);
  EXPECT_FALSE(second.ranks_share_gpu);
  EXPECT_FALSE(second.max_block_bytes);
  EXPECT_EQ(parse_table(table_json(table)).data_movement, table.data_movement);
}

TEST(DataMovementRules, ATableWithoutTheSectionHasNoRulesAndChoosesDirect) {
  const Table table = parse_table(R"({"format": 1, "rules": [{"algorithm": "two_shot"}]})");
  EXPECT_TRUE(table.data_movement.empty());
  const MovementChoice choice = choose_movement(table.data_movement, "t", {Collective::Alltoall, 4, 1, 8});
  EXPECT_EQ(choice.algorithm, MovementAlgorithm::Direct);
  EXPECT_EQ(choice.source, "fallback");
  EXPECT_EQ(table_json(table).find("data_movement"), std::string::npos);
}

TEST(DataMovementRules, BadFieldsAreRejectedNamingWhere) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"algorithm": "direct"})", "data_movement: expected an array"},
      {R"([{"algorithm": "ring"}])", "data_movement[0].algorithm"},
      {R"([{"algorithm": "direct", "collectives": ["bcast"]}])", "data_movement[0].collectives"},
      {R"([{"algorithm": "direct", "collectives": "allgather"}])", "data_movement[0].collectives"},
      {R"([{"algorithm": "direct", "gpus": 2}])", "data_movement[0].gpus"},
      {R"([{"algorithm": "direct", "max_block_bytes": -1}])", "data_movement[0].max_block_bytes"},
      {R"([{"algorithm": "direct", "ranks_share_gpu": "yes"}])", "data_movement[0].ranks_share_gpu"},
      {R"([{"algorithm": "direct", "max_bytes": 1}])", "unknown key \"max_bytes\""},
      {R"([{"why": "no algorithm"}])", "no \"algorithm\""},
  };
  for (const auto& [movement, expected] : cases) {
    try {
      parse_table(table_with(movement));
      ADD_FAILURE() << movement << " was accepted";
    } catch (const TableError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  }
}

TEST(DataMovementRules, TheFirstMatchingRuleWinsBySizeSharingAndCollective) {
  const Table table = parse_table(table_with(R"([
    {"collectives": ["alltoall"], "ranks_share_gpu": true, "max_block_bytes": 100, "algorithm": "gpu_leader"},
    {"gpus": "two", "algorithm": "gpu_leader"},
    {"algorithm": "direct"}])"));
  const auto pick = [&](Collective collective, int ranks, int gpus, std::uint64_t bytes) {
    return choose_movement(table.data_movement, "t", {collective, ranks, gpus, bytes});
  };
  EXPECT_EQ(pick(Collective::Alltoall, 4, 1, 100).algorithm, MovementAlgorithm::GpuLeader);
  EXPECT_EQ(pick(Collective::Alltoall, 4, 1, 100).source, "table:t data_movement rule 1");
  EXPECT_EQ(pick(Collective::Alltoall, 4, 1, 101).source, "table:t data_movement rule 3");
  EXPECT_EQ(pick(Collective::Alltoall, 4, 4, 8).source, "table:t data_movement rule 3") << "no sharing";
  EXPECT_EQ(pick(Collective::Allgather, 4, 1, 8).source, "table:t data_movement rule 3");
  EXPECT_EQ(pick(Collective::Allgather, 2, 2, 8).source, "table:t data_movement rule 2");
}

TEST(DataMovementRules, EveryAlgorithmRunsEveryCollective) {
  const Table table = parse_table(table_with(R"([
    {"max_block_bytes": 64, "algorithm": "staged"}, {"algorithm": "gpu_leader"}])"));
  for (const Collective collective : kCollectives) {
    EXPECT_EQ(choose_movement(table.data_movement, "t", {collective, 4, 1, 64}).algorithm,
              MovementAlgorithm::Staged)
        << collective_name(collective);
    EXPECT_EQ(choose_movement(table.data_movement, "t", {collective, 4, 1, 65}).algorithm,
              MovementAlgorithm::GpuLeader)
        << collective_name(collective);
    EXPECT_EQ(parse_collective(collective_name(collective)), collective);
  }
  EXPECT_EQ(parse_table(table_json(table)).data_movement, table.data_movement);
  EXPECT_EQ(parse_movement_algorithm("staged"), MovementAlgorithm::Staged);
  EXPECT_STREQ(movement_algorithm_name(MovementAlgorithm::Staged), "staged");
}

TEST(DataMovementRules, MpsRulesMatchOnlyTheirSettingAndOlderRulesEither) {
  const std::string text = table_with(R"([
    {"mps": false, "ranks_share_gpu": true, "max_block_bytes": 65536, "algorithm": "staged"},
    {"mps": true, "ranks_share_gpu": true, "algorithm": "gpu_leader"},
    {"mps": null, "algorithm": "direct"}])");
  const Table table = parse_table(text);
  const auto pick = [&](int gpus, std::uint64_t bytes, bool mps) {
    return choose_movement(table.data_movement, "t", {Collective::Allgather, 4, gpus, bytes, mps}).source;
  };
  EXPECT_EQ(pick(1, 65536, false), "table:t data_movement rule 1");
  EXPECT_EQ(pick(1, 65536, true), "table:t data_movement rule 2");
  EXPECT_EQ(pick(1, 65537, false), "table:t data_movement rule 3");
  EXPECT_EQ(pick(4, 8, true), "table:t data_movement rule 3");
  EXPECT_EQ(table.data_movement[0].mps, false);
  EXPECT_FALSE(table.data_movement[2].mps);
  // Written only where set: a rule without it reads as before.
  const std::string written = table_json(table);
  EXPECT_EQ(parse_table(written).data_movement, table.data_movement);
  const auto count = [&](const std::string& needle) {
    std::size_t found = 0;
    for (std::size_t at = written.find(needle); at != std::string::npos; at = written.find(needle, at + 1)) {
      ++found;
    }
    return found;
  };
  EXPECT_EQ(count("\"mps\""), 2u) << written;
  try {
    parse_table(table_with(R"([{"mps": "yes", "algorithm": "direct"}])"));
    ADD_FAILURE() << "a text mps was accepted";
  } catch (const TableError& error) {
    EXPECT_NE(std::string(error.what()).find("data_movement[0].mps"), std::string::npos) << error.what();
  }
}

TEST(DataMovementRules, ShippedTablesCarryTheDefaultRulesAfterTheMeasuredOnes) {
  const Table defaults = shipped_table_for_gpu("").table;
  ASSERT_FALSE(defaults.data_movement.empty());
  const Table h100 = shipped_table_for_gpu("NVIDIA H100 80GB HBM3").table;
  ASSERT_GE(h100.data_movement.size(), defaults.data_movement.size());
  EXPECT_TRUE(
      std::equal(defaults.data_movement.begin(), defaults.data_movement.end(),
                 h100.data_movement.end() - static_cast<std::ptrdiff_t>(defaults.data_movement.size())));
  for (const Collective collective : kCollectives) {
    for (const int gpus : {1, 2, 4}) {
      for (const std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 28}) {
        const MovementChoice choice =
            choose_movement(defaults.data_movement, "default", {collective, 4, gpus, bytes});
        EXPECT_TRUE(choice.source.starts_with("table:default data_movement rule ")) << choice.source;
      }
    }
  }
  // Ranks sharing a GPU without MPS: one context per GPU (gather's root is one already) up to
  // 8 MiB; under MPS, one rank per GPU or larger blocks: direct (gpu_leader lost at 64 KiB under MPS).
  const auto pick = [&](Collective collective, int gpus, std::uint64_t bytes, bool mps) {
    return choose_movement(defaults.data_movement, "d", {collective, 4, gpus, bytes, mps}).algorithm;
  };
  for (const Collective collective : kCollectives) {
    const MovementAlgorithm shared =
        collective == Collective::Gather ? MovementAlgorithm::Direct : MovementAlgorithm::GpuLeader;
    EXPECT_EQ(pick(collective, 1, 64, false), shared) << collective_name(collective);
    EXPECT_EQ(pick(collective, 2, std::uint64_t{8} << 20, false), shared) << collective_name(collective);
    EXPECT_EQ(pick(collective, 1, (std::uint64_t{8} << 20) + 1, false), MovementAlgorithm::Direct);
    EXPECT_EQ(pick(collective, 1, 64, true), MovementAlgorithm::Direct) << collective_name(collective);
    EXPECT_EQ(pick(collective, 4, 64, false), MovementAlgorithm::Direct) << collective_name(collective);
  }
}

} // namespace
} // namespace commlens::runtime::tuning
