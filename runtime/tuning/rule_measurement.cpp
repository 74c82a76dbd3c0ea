#include "rule_measurement.hpp"

#include "table_fields.hpp"

namespace commlens::runtime::tuning {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace fields;

constexpr const char* kMeasurementKeys[] = {"id", "gpu", "host", "ranks", "gpus", "mps", "date", "command"};
constexpr const char* kRuleMeasurementKeys[] = {"measurement", "points"};
constexpr const char* kPointKeys[] = {"bytes", "winner", "winner_us", "runner_up", "runner_up_us"};

std::string required_text(const json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_string() || found->get<std::string>().empty()) {
    fail(where + "." + key, "expected a non-empty string");
  }
  return found->get<std::string>();
}

int required_count(const json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_unsigned() || found->get<std::uint64_t>() < 1 ||
      found->get<std::uint64_t>() > 1'000'000) {
    fail(where + "." + key, "expected a positive integer");
  }
  return found->get<int>();
}

double time_us(const json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) {
    return 0;
  }
  if (!found->is_number() || found->get<double>() < 0) {
    fail(where + "." + key, "expected a time in microseconds (a number >= 0)");
  }
  return found->get<double>();
}

MeasuredPoint parse_point(const json& object, const std::string& where) {
  expect_object_with(object, kPointKeys, where);
  MeasuredPoint point;
  const auto bytes = optional_bytes(object, "bytes", where);
  if (!bytes) {
    fail(where + ".bytes", "expected the measured size in bytes");
  }
  point.bytes = *bytes;
  point.winner = required_text(object, "winner", where);
  point.winner_us = time_us(object, "winner_us", where);
  point.runner_up = optional_text(object, "runner_up", where);
  point.runner_up_us = time_us(object, "runner_up_us", where);
  return point;
}

} // namespace

std::vector<Measurement> parse_measurements(const json& array) {
  if (!array.is_array()) {
    fail("measurements", "expected an array of measurements");
  }
  std::vector<Measurement> measurements;
  for (std::size_t index = 0; index < array.size(); ++index) {
    const std::string where = fmt::format("measurements[{}]", index);
    const json& object = array[index];
    expect_object_with(object, kMeasurementKeys, where);
    Measurement measurement;
    measurement.id = required_text(object, "id", where);
    measurement.gpu = required_text(object, "gpu", where);
    measurement.host = optional_text(object, "host", where);
    measurement.ranks = required_count(object, "ranks", where);
    measurement.gpus = required_count(object, "gpus", where);
    const std::optional<bool> mps = optional_flag(object, "mps", where);
    if (!mps) {
      fail(where + ".mps", "expected true or false");
    }
    measurement.mps = *mps;
    measurement.date = required_text(object, "date", where);
    measurement.command = required_text(object, "command", where);
    for (const Measurement& earlier : measurements) {
      if (earlier.id == measurement.id) {
        fail(where + ".id",
             fmt::format("\"{}\" is already the id of an earlier measurement", measurement.id));
      }
    }
    measurements.push_back(std::move(measurement));
  }
  return measurements;
}

ordered_json measurements_json(const std::vector<Measurement>& measurements) {
  ordered_json array = ordered_json::array();
  for (const Measurement& measurement : measurements) {
    array.push_back({{"id", measurement.id},
                     {"gpu", measurement.gpu},
                     {"host", measurement.host},
                     {"ranks", measurement.ranks},
                     {"gpus", measurement.gpus},
                     {"mps", measurement.mps},
                     {"date", measurement.date},
                     {"command", measurement.command}});
  }
  return array;
}

} // namespace commlens::runtime::tuning

namespace commlens::runtime::tuning::fields {

OptionalMeasurement parse_rule_measurement(const json& rule, const std::string& where) {
  const auto found = rule.find("measured");
  if (found == rule.end() || found->is_null()) {
    return std::nullopt;
  }
  const std::string here = where + ".measured";
  expect_object_with(*found, kRuleMeasurementKeys, here);
  RuleMeasurement measured;
  measured.measurement = required_text(*found, "measurement", here);
  const auto points = found->find("points");
  if (points == found->end() || !points->is_array() || points->empty()) {
    fail(here + ".points", "expected a non-empty array of measured sizes");
  }
  for (std::size_t index = 0; index < points->size(); ++index) {
    measured.points.push_back(parse_point((*points)[index], fmt::format("{}.points[{}]", here, index)));
  }
  return measured;
}

void put_rule_measurement(ordered_json& object, const OptionalMeasurement& measured) {
  if (!measured) {
    return;
  }
  ordered_json points = ordered_json::array();
  for (const MeasuredPoint& point : measured->points) {
    ordered_json entry{{"bytes", point.bytes}, {"winner", point.winner}, {"winner_us", point.winner_us}};
    if (!point.runner_up.empty()) {
      entry["runner_up"] = point.runner_up;
      entry["runner_up_us"] = point.runner_up_us;
    }
    points.push_back(std::move(entry));
  }
  object["measured"] = {{"measurement", measured->measurement}, {"points", std::move(points)}};
}

} // namespace commlens::runtime::tuning::fields
