// Table format 2: the measurements a measured table lists and the "measured" object of each rule
// they produced, parsed, written back, and refused with the part named when wrong.
#include "tree_rules.hpp"
#include "tuning_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace commlens::runtime::tuning {
namespace {

constexpr const char* kMeasurements = R"("measurements": [
  {"id": "allreduce", "gpu": "NVIDIA H100 80GB HBM3", "host": "node1", "ranks": 4, "gpus": 1, "mps": true,
   "date": "2026-11-25T22:00:00Z", "command": "commlens tune --quick"}])";

std::string table(const std::string& format, const std::string& rule_measured, const std::string& rest = "") {
  return R"({"format": )" + format + R"(, "gpu": "H100", "rules": [{"algorithm": "one_shot")" +
         rule_measured + "}]" + rest + "}";
}

constexpr const char* kMeasured = R"(, "measured": {"measurement": "allreduce", "points": [
  {"bytes": 8, "winner": "one_shot", "winner_us": 12.5, "runner_up": "two_shot", "runner_up_us": 20.25},
  {"bytes": 16, "winner": "one_shot", "winner_us": 12.75}]})";

TEST(RuleMeasurement, FormatTwoCarriesEachRulesMeasurementAndRoundTrips) {
  const Table parsed = parse_table(table("2", kMeasured, std::string(",") + kMeasurements));
  ASSERT_EQ(parsed.measurements.size(), 1u);
  EXPECT_EQ(parsed.measurements[0].gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(parsed.measurements[0].mps);
  EXPECT_EQ(parsed.measurements[0].ranks, 4);
  ASSERT_TRUE(parsed.rules[0].measured);
  const RuleMeasurement& measured = *parsed.rules[0].measured;
  EXPECT_EQ(measured.measurement, "allreduce");
  ASSERT_EQ(measured.points.size(), 2u);
  EXPECT_EQ(measured.points[0].runner_up, "two_shot");
  EXPECT_DOUBLE_EQ(measured.points[0].runner_up_us, 20.25);
  EXPECT_TRUE(measured.points[1].runner_up.empty());
  const Table again = parse_table(table_json(parsed));
  EXPECT_EQ(again.rules, parsed.rules);
  EXPECT_EQ(again.measurements, parsed.measurements);
  EXPECT_NE(table_json(parsed).find("\"format\": 2"), std::string::npos);
}

TEST(RuleMeasurement, EveryRuleKindCanNameItsMeasurement) {
  const std::string measured =
      R"("measured": {"measurement": "allreduce", "points": [{"bytes": 8, "winner": "x"}]})";
  const Table parsed = parse_table(
      table("2", "",
            ", \"point_to_point\": {" + measured + "}, \"data_movement\": [{\"algorithm\": \"direct\", " +
                measured + "}], \"trees\": [{" + measured + "}], " + kMeasurements));
  EXPECT_TRUE(parsed.point_to_point.measured);
  EXPECT_TRUE(parsed.data_movement[0].measured);
  EXPECT_TRUE(parsed.trees[0].measured);
  EXPECT_EQ(parse_table(table_json(parsed)).trees, parsed.trees);
}

TEST(RuleMeasurement, BadMeasurementsAreRefusedNamingThePart) {
  const std::string listed = std::string(",") + kMeasurements;
  const std::pair<std::string, const char*> cases[] = {
      {table("1", kMeasured, listed), "measurements: needs \"format\": 2"},
      {table("1", kMeasured), "rules[0].measured: needs \"format\": 2"},
      {table("2", kMeasured), "rules[0].measured.measurement: \"allreduce\" is not the id"},
      {table("2", R"(, "measured": {"measurement": "allreduce", "points": []})", listed),
       "rules[0].measured.points: expected a non-empty array"},
      {table("2", R"(, "measured": {"measurement": "allreduce", "points": [{"bytes": 8}]})", listed),
       "rules[0].measured.points[0].winner: expected a non-empty string"},
      {table("2", R"(, "measured": {"measurement": "allreduce", "points": [{"bytes": 8, "winner": "a",
        "winner_us": -1}]})",
             listed),
       "rules[0].measured.points[0].winner_us: expected a time"},
      {table("2", "", R"(, "measurements": [{"id": "a", "gpu": "g", "ranks": 0, "gpus": 1, "mps": false,
        "date": "d", "command": "c"}])"),
       "measurements[0].ranks: expected a positive integer"},
      {table("2", "", R"(, "measurements": [{"id": "a", "gpu": "g", "ranks": 2, "gpus": 1, "date": "d",
        "command": "c"}])"),
       "measurements[0].mps: expected true or false"},
      {table("2", "", R"(, "measurements": [{"id": "a", "gpu": "g", "ranks": 2, "gpus": 1, "mps": true,
        "date": "d", "command": "c", "cpu": "x"}])"),
       "measurements[0]: unknown key \"cpu\""},
  };
  for (const auto& [text, message] : cases) {
    try {
      parse_table(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const TableError& error) {
      EXPECT_TRUE(std::string(error.what()).starts_with(message)) << error.what();
    }
  }
}

} // namespace
} // namespace commlens::runtime::tuning
