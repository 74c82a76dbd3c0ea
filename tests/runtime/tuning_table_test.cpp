// The tuning table without a GPU: parsing (and every kind of bad input with its message), rule
// matching with unsafe choices skipped, and the shipped tables against the fixed rules they
// replaced.
#include "shipped_tables.hpp"
#include "tuning_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using namespace commlens::runtime::tuning;

std::string table_with_rule(const std::string& rule) {
  return R"({"format": 1, "gpu": "test", "rules": [)" + rule + "]}";
}

std::string parse_error(const std::string& text) {
  try {
    parse_table(text);
  } catch (const TableError& error) {
    return error.what();
  }
  return "(parsed)";
}

TEST(TuningTable, ParsesEveryFieldAndDefaultsTheOmittedOnes) {
  const Table table = parse_table(R"({"format": 1, "gpu": "H100", "rules": [
    {"gpus": "more", "ranks_share_gpu": false, "in_place": null, "max_bytes": 4096,
     "algorithm": "two_shot", "host_percent": 7, "why": "measured"},
    {"algorithm": "one_shot_striped"}]})");
  EXPECT_EQ(table.gpu, "H100");
  ASSERT_EQ(table.rules.size(), 2u);
  EXPECT_EQ(table.rules[0],
            (Rule{GpuCount::More, false, std::nullopt, 4096, AllreduceAlgorithm::TwoShot, 7, "measured"}));
  EXPECT_EQ(table.rules[1], (Rule{GpuCount::Any, std::nullopt, std::nullopt, std::nullopt,
                                  AllreduceAlgorithm::OneShotStriped, 0, ""}));
}

TEST(TuningTable, WrittenTablesReadBackEqual) {
  const Table table{"H200",
                    {{GpuCount::Two, true, false, 1024, AllreduceAlgorithm::OneShot, 0, "small"},
                     {GpuCount::Any, std::nullopt, std::nullopt, std::nullopt,
                      AllreduceAlgorithm::OneShotStriped, 13, ""}}};
  const Table read = parse_table(table_json(table));
  EXPECT_EQ(read.gpu, table.gpu);
  EXPECT_EQ(read.rules, table.rules);
  EXPECT_EQ(read.point_to_point, PointToPointStripe{});
}

TEST(TuningTable, PointToPointStripingIsOptionalAndReadsBackEqual) {
  EXPECT_EQ(parse_table(table_with_rule(R"({"algorithm": "one_shot"})")).point_to_point,
            (PointToPointStripe{std::uint64_t{16} << 20, 0, ""}));
  const Table table = parse_table(R"({"format": 1, "rules": [{"algorithm": "one_shot"}],
    "point_to_point": {"min_bytes": 33554432, "host_percent": 12, "why": "396 + 55 GB/s"}})");
  EXPECT_EQ(table.point_to_point, (PointToPointStripe{std::uint64_t{32} << 20, 12, "396 + 55 GB/s"}));
  EXPECT_EQ(parse_table(table_json(table)).point_to_point, table.point_to_point);
}

TEST(TuningTable, PointToPointHostShareFollowsSizeGpusAndOverride) {
  const PointToPointStripe stripe{std::uint64_t{16} << 20, 12, ""};
  const std::uint64_t gib = std::uint64_t{1} << 30;
  // 12 % of 1 GiB, rounded down to 4 KiB: 128,849,018 -> 128,847,872.
  EXPECT_EQ(p2p_host_bytes(stripe, std::nullopt, gib, false), 128847872u);
  EXPECT_EQ(p2p_host_bytes(stripe, std::nullopt, gib, true), 0u) << "the table's share needs two GPUs";
  EXPECT_EQ(p2p_host_bytes(stripe, std::nullopt, (std::uint64_t{16} << 20) - 1, false), 0u)
      << "below min_bytes";
  EXPECT_EQ(p2p_host_bytes(stripe, 25u, gib, true), gib / 4) << "a forced share applies on one GPU too";
  EXPECT_EQ(p2p_host_bytes(stripe, 0u, gib, false), 0u) << "a forced 0 turns striping off";
  EXPECT_EQ(p2p_host_bytes(PointToPointStripe{}, std::nullopt, gib, false), 0u) << "the default share is 0";
  EXPECT_EQ(p2p_host_bytes(stripe, 25u, (std::uint64_t{64} << 20) + 5, true), std::uint64_t{16} << 20);
}

TEST(TuningTable, EachKindOfBadInputIsNamedInItsMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"{", "not JSON"},
      {"[]", "table: expected an object"},
      {R"({"gpu": "x", "rules": [{"algorithm": "one_shot"}]})", "format: expected 1"},
      {R"({"format": 3, "rules": [{"algorithm": "one_shot"}]})", "format: expected 1 to 2"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "rule": []})", "table: unknown key \"rule\""},
      {R"({"format": 1, "gpu": 3, "rules": [{"algorithm": "one_shot"}]})", "gpu: expected a string"},
      {R"({"format": 1, "rules": []})", "rules: expected a non-empty array"},
      {R"({"format": 1, "rules": {}})", "rules: expected a non-empty array"},
      {table_with_rule("3"), "rules[0]: expected an object"},
      {table_with_rule(R"({"gpus": "one"})"), "rules[0]: no \"algorithm\""},
      {table_with_rule(R"({"algorithm": "three_shot"})"), "rules[0].algorithm: expected \"one_shot\""},
      {table_with_rule(R"({"gpus": "four", "algorithm": "one_shot"})"), "rules[0].gpus: expected \"one\""},
      {table_with_rule(R"({"in_place": "yes", "algorithm": "one_shot"})"),
       "rules[0].in_place: expected true"},
      {table_with_rule(R"({"ranks_share_gpu": 1, "algorithm": "one_shot"})"),
       "rules[0].ranks_share_gpu: expected true"},
      {table_with_rule(R"({"max_bytes": -1, "algorithm": "one_shot"})"),
       "rules[0].max_bytes: expected a byte"},
      {table_with_rule(R"({"max_bytes": 1.5, "algorithm": "one_shot"})"),
       "rules[0].max_bytes: expected a byte"},
      {table_with_rule(R"({"host_percent": 51, "algorithm": "one_shot"})"),
       "rules[0].host_percent: expected an integer from 0 to 50"},
      {table_with_rule(R"({"why": 1, "algorithm": "one_shot"})"), "rules[0].why: expected a string"},
      {table_with_rule(R"({"algorithm": "one_shot"}, {"max_byte": 4, "algorithm": "one_shot"})"),
       "rules[1]: unknown key \"max_byte\""},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "point_to_point": 3})",
       "point_to_point: expected an object"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "point_to_point": {"min_bytes": 1024}})",
       "point_to_point.min_bytes: expected a byte count of at least 1048576"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "point_to_point": {"host_percent": 60}})",
       "point_to_point.host_percent: expected an integer from 0 to 50"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "point_to_point": {"share": 1}})",
       "point_to_point: unknown key \"share\""},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": {}})",
       "resident: expected an array of resident rules"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [{"collective": "scan", "max_bytes": 8}]})",
       "resident[0].collective: expected one of \"bcast\", \"gather\", \"scatter\", \"allgather\", "
       "\"alltoall\", "
       "\"reduce\", \"allreduce\", \"reduce_scatter\", \"reduce_scatter_block\""},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [{"collective": "bcast"}]})",
       "resident[0].max_bytes: expected the largest contribution"},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [{"collective": "bcast", "max_bytes": 8,
          "gpus": "one"}]})",
       "resident[0]: unknown key \"gpus\""},
      {R"({"format": 1, "rules": [{"algorithm": "one_shot"}], "resident": [{"collective": "bcast", "max_bytes": 8,
          "measured": {"measurement": "m", "points": [{"bytes": 8, "winner": "resident", "winner_us": 1}]}}]})",
       "resident[0].measured: needs \"format\": 2"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_NE(parse_error(text).find(message), std::string::npos)
        << text << "\n  gave: " << parse_error(text) << "\n  expected: " << message;
  }
}

TEST(TuningTable, FirstMatchingRuleWinsAndNamesItself) {
  const Table table = parse_table(table_with_rule(R"(
    {"gpus": "two", "max_bytes": 1024, "algorithm": "two_shot"},
    {"ranks_share_gpu": true, "algorithm": "two_shot"},
    {"algorithm": "one_shot"})"));
  const auto source = [&](CallShape call) { return choose(table, "t", call, {}).source; };
  EXPECT_EQ(source({2, 2, false, 1024}), "table:t rule 1");
  EXPECT_EQ(source({2, 2, false, 1025}), "table:t rule 3");
  EXPECT_EQ(source({4, 3, false, 1024}), "table:t rule 2"); // gpus "two" does not match 3 GPUs
  EXPECT_EQ(source({3, 3, false, 1 << 20}), "table:t rule 3");
}

TEST(TuningTable, UnsafeChoicesAreSkippedForTheNextRule) {
  const Table table = parse_table(table_with_rule(R"(
    {"algorithm": "one_shot_striped"},
    {"algorithm": "one_shot"},
    {"algorithm": "two_shot"})"));
  // Striping without a host share, then one-shot in place on two GPUs: both unsafe.
  const Choice in_place = choose(table, "t", {2, 2, true, 1 << 30}, {});
  EXPECT_EQ(in_place.algorithm, AllreduceAlgorithm::TwoShot);
  EXPECT_EQ(in_place.source, "table:t rule 3");
  // A share from the setting makes striping safe for two ranks on two GPUs only.
  EXPECT_EQ(choose(table, "t", {2, 2, false, 8}, {.host_percent = 13}).algorithm,
            AllreduceAlgorithm::OneShotStriped);
  EXPECT_EQ(choose(table, "t", {4, 2, false, 8}, {.host_percent = 13}).algorithm,
            AllreduceAlgorithm::OneShot);
  // In place is one-shot's when every rank is on one GPU.
  EXPECT_EQ(choose(table, "t", {4, 1, true, 8}, {}).source, "table:t rule 2");
}

TEST(TuningTable, NoSafeRuleFallsBackToTheSafeDefault) {
  const Table table = parse_table(table_with_rule(R"({"in_place": true, "algorithm": "one_shot"})"));
  EXPECT_EQ(choose(table, "t", {2, 2, true, 8}, {}).algorithm, AllreduceAlgorithm::TwoShot);
  EXPECT_EQ(choose(table, "t", {2, 2, true, 8}, {}).source, "fallback");
  EXPECT_EQ(choose(table, "t", {2, 2, false, 8}, {}).algorithm, AllreduceAlgorithm::OneShot);
}

TEST(TuningTable, AForcedAlgorithmRunsWhereSafeElseTheTableSaysWhy) {
  const Table table = parse_table(table_with_rule(R"({"algorithm": "two_shot"})"));
  const Choice forced = choose(table, "t", {2, 2, false, 8}, {.forced = AllreduceAlgorithm::OneShot});
  EXPECT_EQ(forced.algorithm, AllreduceAlgorithm::OneShot);
  EXPECT_EQ(forced.source, "forced");
  const Choice overruled = choose(table, "t", {2, 2, true, 8}, {.forced = AllreduceAlgorithm::OneShot});
  EXPECT_EQ(overruled.algorithm, AllreduceAlgorithm::TwoShot);
  EXPECT_EQ(overruled.source, "table:t rule 1 (forced one_shot: in place needs two-shot)");
  const Choice striped =
      choose(table, "t", {2, 2, false, 8}, {.forced = AllreduceAlgorithm::OneShotStriped, .host_percent = 9});
  EXPECT_EQ(striped.algorithm, AllreduceAlgorithm::OneShotStriped);
  EXPECT_EQ(striped.host_percent, 9u);
  EXPECT_EQ(choose(table, "t", {2, 2, false, 8}, {.forced = AllreduceAlgorithm::OneShotStriped}).source,
            "table:t rule 1 (forced one_shot_striped: striping needs a host share)");
}

// The rules choose_algorithm had before the table (allreduce_entry.cpp at a49d1ad).
AllreduceAlgorithm fixed_rules(const CallShape& call, std::uint32_t host_percent) {
  if (call.gpus == 1) {
    return AllreduceAlgorithm::OneShot;
  }
  if (call.in_place || (call.gpus > 2 && call.bytes > 256 * 1024)) {
    return AllreduceAlgorithm::TwoShot;
  }
  if (call.ranks == 2 && call.bytes >= (256u << 20) && host_percent > 0) {
    return AllreduceAlgorithm::OneShotStriped;
  }
  return AllreduceAlgorithm::OneShot;
}

TEST(ShippedTables, ReproduceTheFixedRulesOnEveryShape) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 8; bytes <= (1u << 30); bytes *= 2) {
    sizes.push_back(bytes);
  }
  for (const std::uint64_t edge : {std::uint64_t{256} << 10, std::uint64_t{256} << 20}) {
    sizes.insert(sizes.end(), {edge - 1, edge + 1});
  }
  for (const char* gpu : {"NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"}) {
    const NamedTable shipped = shipped_table_for_gpu(gpu);
    for (int ranks = 2; ranks <= 8; ++ranks) {
      for (int gpus = 1; gpus <= ranks; ++gpus) {
        for (const bool in_place : {false, true}) {
          for (const std::uint64_t bytes : sizes) {
            for (const std::optional<std::uint32_t> percent : {std::optional<std::uint32_t>{}, {0}, {13}}) {
              const CallShape call{ranks, gpus, in_place, bytes};
              const Choice choice = choose(shipped.table, shipped.name, call, {.host_percent = percent});
              const AllreduceAlgorithm expected = fixed_rules(call, percent.value_or(0));
              ASSERT_EQ(choice.algorithm, expected)
                  << gpu << " ranks " << ranks << " gpus " << gpus << " in place " << in_place << " bytes "
                  << bytes << " host percent " << percent.value_or(0) << " (" << choice.source << ")";
              if (expected == AllreduceAlgorithm::OneShotStriped) {
                EXPECT_EQ(choice.host_percent, 13u);
              }
              EXPECT_TRUE(choice.source.starts_with("table:" + shipped.name + " rule ")) << choice.source;
            }
          }
        }
      }
    }
  }
}

TEST(ShippedTables, AreChosenByTheGpuName) {
  EXPECT_EQ(shipped_table_for_gpu("NVIDIA H100 80GB HBM3").name, "h100");
  EXPECT_EQ(shipped_table_for_gpu("NVIDIA H100").table.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(shipped_table_for_gpu("NVIDIA H200 NVL").name, "h200");
  EXPECT_EQ(shipped_table_for_gpu("NVIDIA H200").table.gpu, "NVIDIA H200");
  // No table was measured on these: the default rules alone.
  EXPECT_EQ(shipped_table_for_gpu("NVIDIA A100-SXM4-80GB").name, "default");
  EXPECT_EQ(shipped_table_for_gpu("").name, "default");
  EXPECT_EQ(shipped_table_for_gpu("").table.gpu, "any");
}

// A GPU's table holds what was measured on it, each rule naming a measurement the table lists, taken
// on that GPU; the default rules follow for the shapes the measurements do not cover.
TEST(ShippedTables, AMeasuredTableNamesItsMeasurementsAndFallsBackToTheDefaultRules) {
  const Table defaults = shipped_table_for_gpu("").table;
  for (const char* gpu : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    const NamedTable shipped = shipped_table_for_gpu(gpu);
    const Table& table = shipped.table;
    SCOPED_TRACE(gpu);
    ASSERT_GT(table.rules.size(), defaults.rules.size());
    const std::size_t measured = table.rules.size() - defaults.rules.size();
    const auto names_a_listed_measurement = [&](const std::optional<RuleMeasurement>& from) {
      ASSERT_TRUE(from.has_value());
      const auto listed = std::ranges::find(table.measurements, from->measurement, &Measurement::id);
      ASSERT_NE(listed, table.measurements.end()) << from->measurement;
      EXPECT_EQ(listed->gpu, table.gpu);
      EXPECT_FALSE(from->points.empty());
    };
    for (std::size_t index = 0; index < measured; ++index) {
      names_a_listed_measurement(table.rules[index].measured);
    }
    for (const TreeRule& rule : table.trees) {
      if (rule.measured) {
        names_a_listed_measurement(rule.measured);
      }
    }
    for (const MovementRule& rule : table.data_movement) {
      if (rule.measured) {
        names_a_listed_measurement(rule.measured);
        const auto listed =
            std::ranges::find(table.measurements, rule.measured->measurement, &Measurement::id);
        EXPECT_EQ(listed->mps, rule.mps.value_or(false)); // rules under MPS come from a run under MPS
      }
    }
    EXPECT_TRUE(std::equal(defaults.rules.begin(), defaults.rules.end(), table.rules.begin() + measured));
    for (const Rule& rule : defaults.rules) {
      EXPECT_FALSE(rule.measured.has_value()) << rule.why;
    }
    const auto rule_index = [&](const CallShape& call) {
      return std::stoul(
          choose(table, shipped.name, call, {}).source.substr(("table:" + shipped.name + " rule ").size()));
    };
    // Four ranks sharing one GPU: a measured rule. Two ranks on two GPUs: a measured rule where the
    // table lists a two-GPU measurement, else the defaults; above the largest size an allreduce
    // measurement swept (32 MiB), the defaults.
    EXPECT_LE(rule_index({4, 1, false, 1u << 20}), measured);
    const bool two_gpus_measured = std::ranges::any_of(
        table.measurements, [](const Measurement& measurement) { return measurement.gpus == 2; });
    EXPECT_EQ(rule_index({2, 2, false, 1u << 20}) < measured, two_gpus_measured);
    EXPECT_GE(rule_index({2, 2, false, std::uint64_t{512} << 20}), measured);
    EXPECT_GE(rule_index({4, 1, false, std::uint64_t{512} << 20}), measured);
  }
}

class TableFile : public ::testing::Test {
protected:
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("commlens-tuning-" + std::to_string(::getpid()) + ".json");
  void write(const std::string& text) { std::ofstream(path) << text; }
  void TearDown() override { std::filesystem::remove(path); }
};

TEST_F(TableFile, AGoodFileIsUsedAndNamed) {
  write(table_with_rule(R"({"algorithm": "two_shot"})"));
  const LoadedTable loaded = load_table("NVIDIA H100", path.string());
  EXPECT_EQ(loaded.named.name, "file");
  EXPECT_EQ(loaded.description, "file:" + path.string());
  EXPECT_TRUE(loaded.problem.empty());
  EXPECT_EQ(choose(loaded.named.table, loaded.named.name, {2, 2, false, 8}, {}).source, "table:file rule 1");
}

TEST_F(TableFile, ABadOrMissingFileLeavesTheShippedTableWithTheReason) {
  write(table_with_rule(R"({"algorithm": "four_shot"})"));
  const LoadedTable bad = load_table("NVIDIA H100", path.string());
  EXPECT_EQ(bad.named.name, "h100");
  EXPECT_NE(bad.problem.find("rules[0].algorithm"), std::string::npos) << bad.problem;
  EXPECT_EQ(bad.description, "shipped:h100 (file " + path.string() + " rejected: " + bad.problem + ")");
  std::filesystem::remove(path);
  const LoadedTable missing = load_table("", path.string());
  EXPECT_EQ(missing.named.name, "default");
  EXPECT_EQ(missing.problem, "cannot be read");
}

TEST(TableFileless, NoFileMeansTheShippedTable) {
  const LoadedTable loaded = load_table("NVIDIA H100", "");
  EXPECT_EQ(loaded.description, "shipped:h100");
  EXPECT_TRUE(loaded.problem.empty());
}

} // namespace
