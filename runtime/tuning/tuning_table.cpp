#include "tuning_table.hpp"

#include "resident_rules.hpp"
#include "table_fields.hpp"
#include "tree_rules_format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace commlens::runtime::tuning {

namespace {

using nlohmann::json;
using namespace fields;

constexpr std::uint32_t kMaxHostPercent = 50; // as COMMLENS_RUNTIME_HOST_PERCENT
constexpr const char* kTableKeys[] = {"format",        "gpu",   "rules",    "point_to_point",
                                      "data_movement", "trees", "resident", "measurements"};
constexpr const char* kRuleKeys[] = {"gpus",      "ranks_share_gpu", "in_place",     "max_bytes", "min_ranks",
                                     "max_ranks", "algorithm",       "host_percent", "why",       "measured"};
constexpr const char* kPointToPointKeys[] = {"min_bytes", "host_percent", "why", "measured"};
constexpr int kFirstTableFormat = 1;
// A striped message's host share is at least one stage chunk's worth at the smallest share.
constexpr std::uint64_t kMinStripedBytes = std::uint64_t{1} << 20;

bool matches(const Rule& rule, const CallShape& call) {
  return gpu_count_matches(rule.gpus, call.gpus) &&
         (!rule.ranks_share_gpu || *rule.ranks_share_gpu == (call.gpus < call.ranks)) &&
         (!rule.in_place || *rule.in_place == call.in_place) &&
         (!rule.max_bytes || call.bytes <= *rule.max_bytes) && rule.ranks.contains(call.ranks);
}

// "host_percent" and "why", optional in rules and in "point_to_point" alike.
void parse_share_and_why(const json& object, const std::string& where, std::uint32_t* host_percent,
                         std::string* why) {
  if (const auto percent = object.find("host_percent"); percent != object.end()) {
    if (!percent->is_number_unsigned() || percent->get<std::uint64_t>() > kMaxHostPercent) {
      fail(where + ".host_percent", fmt::format("expected an integer from 0 to {}", kMaxHostPercent));
    }
    *host_percent = percent->get<std::uint32_t>();
  }
  *why = optional_text(object, "why", where);
}

PointToPointStripe parse_point_to_point(const json& object) {
  expect_object_with(object, kPointToPointKeys, "point_to_point");
  PointToPointStripe stripe;
  if (const auto min_bytes = object.find("min_bytes"); min_bytes != object.end()) {
    if (!min_bytes->is_number_unsigned() || min_bytes->get<std::uint64_t>() < kMinStripedBytes) {
      fail("point_to_point.min_bytes", fmt::format("expected a byte count of at least {}", kMinStripedBytes));
    }
    stripe.min_bytes = min_bytes->get<std::uint64_t>();
  }
  parse_share_and_why(object, "point_to_point", &stripe.host_percent, &stripe.why);
  stripe.measured = parse_rule_measurement(object, "point_to_point");
  return stripe;
}

Rule parse_rule(const json& object, const std::string& where) {
  expect_object_with(object, kRuleKeys, where);
  Rule rule;
  rule.gpus = parse_gpu_count(object, where);
  rule.ranks_share_gpu = optional_flag(object, "ranks_share_gpu", where);
  rule.in_place = optional_flag(object, "in_place", where);
  rule.max_bytes = optional_bytes(object, "max_bytes", where);
  rule.ranks = parse_rank_range(object, where);
  const auto algorithm = object.find("algorithm");
  if (algorithm == object.end()) {
    fail(where, "no \"algorithm\"");
  }
  const auto parsed = algorithm->is_string() ? parse_algorithm(algorithm->get<std::string>()) : std::nullopt;
  if (!parsed) {
    fail(where + ".algorithm", "expected \"one_shot\", \"two_shot\" or \"one_shot_striped\"");
  }
  rule.algorithm = *parsed;
  parse_share_and_why(object, where, &rule.host_percent, &rule.why);
  rule.measured = parse_rule_measurement(object, where);
  return rule;
}

// ordered_json keeps the keys in the order a reader expects, not alphabetical.
nlohmann::ordered_json rule_json(const Rule& rule) {
  using nlohmann::ordered_json;
  ordered_json object;
  object["gpus"] = gpu_count_name(rule.gpus);
  object["ranks_share_gpu"] = rule.ranks_share_gpu ? ordered_json(*rule.ranks_share_gpu) : ordered_json();
  object["in_place"] = rule.in_place ? ordered_json(*rule.in_place) : ordered_json();
  object["max_bytes"] = rule.max_bytes ? ordered_json(*rule.max_bytes) : ordered_json();
  put_rank_range(object, rule.ranks);
  object["algorithm"] = algorithm_name(rule.algorithm);
  object["host_percent"] = rule.host_percent;
  if (!rule.why.empty()) {
    object["why"] = rule.why;
  }
  put_rule_measurement(object, rule.measured);
  return object;
}

// Every "measured" names a listed measurement; a format 1 table has neither.
void check_measurements(const Table& table, int format) {
  const auto check = [&](const OptionalMeasurement& measured, const std::string& where) {
    if (!measured) {
      return;
    }
    if (format < 2) {
      fail(where + ".measured", "needs \"format\": 2");
    }
    if (std::ranges::none_of(table.measurements,
                             [&](const Measurement& listed) { return listed.id == measured->measurement; })) {
      fail(where + ".measured.measurement",
           fmt::format("\"{}\" is not the id of an entry of \"measurements\"", measured->measurement));
    }
  };
  for (std::size_t index = 0; index < table.rules.size(); ++index) {
    check(table.rules[index].measured, fmt::format("rules[{}]", index));
  }
  for (std::size_t index = 0; index < table.data_movement.size(); ++index) {
    check(table.data_movement[index].measured, fmt::format("data_movement[{}]", index));
  }
  for (std::size_t index = 0; index < table.trees.size(); ++index) {
    check(table.trees[index].measured, fmt::format("trees[{}]", index));
  }
  for (std::size_t index = 0; index < table.resident.size(); ++index) {
    check(table.resident[index].measured, fmt::format("resident[{}]", index));
  }
  check(table.point_to_point.measured, "point_to_point");
}

} // namespace

const char* algorithm_name(AllreduceAlgorithm algorithm) noexcept {
  switch (algorithm) {
  case AllreduceAlgorithm::TwoShot:
    return "two_shot";
  case AllreduceAlgorithm::OneShotStriped:
    return "one_shot_striped";
  case AllreduceAlgorithm::Hierarchical:
    return "hierarchical";
  case AllreduceAlgorithm::OneShot:
    break;
  }
  return "one_shot";
}

std::optional<AllreduceAlgorithm> parse_algorithm(std::string_view name) {
  for (const AllreduceAlgorithm algorithm : kAlgorithms) {
    if (name == algorithm_name(algorithm)) {
      return algorithm;
    }
  }
  return std::nullopt;
}

Table parse_table(std::string_view json_text) {
  json document;
  try {
    document = json::parse(json_text);
  } catch (const json::parse_error& error) {
    throw TableError(fmt::format("not JSON ({})", error.what()));
  }
  if (!document.is_object()) {
    fail("table", "expected an object with \"format\", \"gpu\" and \"rules\"");
  }
  expect_object_with(document, kTableKeys, "table");
  const auto format = document.find("format");
  if (format == document.end() || !format->is_number_integer() || format->get<int>() < kFirstTableFormat ||
      format->get<int>() > kTableFormat) {
    fail("format", fmt::format("expected {} to {} (the table formats this commlens reads)", kFirstTableFormat,
                               kTableFormat));
  }
  Table table;
  if (const auto gpu = document.find("gpu"); gpu != document.end()) {
    if (!gpu->is_string()) {
      fail("gpu", "expected a string");
    }
    table.gpu = gpu->get<std::string>();
  }
  const auto rules = document.find("rules");
  if (rules == document.end() || !rules->is_array() || rules->empty()) {
    fail("rules", "expected a non-empty array of rules");
  }
  for (std::size_t index = 0; index < rules->size(); ++index) {
    table.rules.push_back(parse_rule((*rules)[index], fmt::format("rules[{}]", index)));
  }
  if (const auto p2p = document.find("point_to_point"); p2p != document.end()) {
    table.point_to_point = parse_point_to_point(*p2p);
  }
  if (const auto movement = document.find("data_movement"); movement != document.end()) {
    if (!movement->is_array()) {
      fail("data_movement", "expected an array of rules");
    }
    for (std::size_t index = 0; index < movement->size(); ++index) {
      table.data_movement.push_back(
          parse_movement_rule((*movement)[index], fmt::format("data_movement[{}]", index)));
    }
  }
  if (const auto trees = document.find("trees"); trees != document.end()) {
    table.trees = parse_tree_rules(*trees);
  }
  if (const auto resident = document.find("resident"); resident != document.end()) {
    table.resident = parse_resident_rules(*resident);
  }
  if (const auto measurements = document.find("measurements"); measurements != document.end()) {
    if (format->get<int>() < 2) {
      fail("measurements", "needs \"format\": 2");
    }
    table.measurements = parse_measurements(*measurements);
  }
  check_measurements(table, format->get<int>());
  return table;
}

std::string table_json(const Table& table) {
  nlohmann::ordered_json document{
      {"format", kTableFormat}, {"gpu", table.gpu}, {"rules", nlohmann::ordered_json::array()}};
  for (const Rule& rule : table.rules) {
    document["rules"].push_back(rule_json(rule));
  }
  const PointToPointStripe& p2p = table.point_to_point;
  document["point_to_point"] = {{"min_bytes", p2p.min_bytes}, {"host_percent", p2p.host_percent}};
  if (!p2p.why.empty()) {
    document["point_to_point"]["why"] = p2p.why;
  }
  put_rule_measurement(document["point_to_point"], p2p.measured);
  if (!table.data_movement.empty()) {
    document["data_movement"] = nlohmann::ordered_json::array();
    for (const MovementRule& rule : table.data_movement) {
      document["data_movement"].push_back(movement_rule_json(rule));
    }
  }
  if (!table.trees.empty()) {
    document["trees"] = tree_rules_json(table.trees);
  }
  if (!table.resident.empty()) {
    document["resident"] = resident_rules_json(table.resident);
  }
  if (!table.measurements.empty()) {
    document["measurements"] = measurements_json(table.measurements);
  }
  return document.dump(2) + "\n";
}

const char* unsafe_reason(AllreduceAlgorithm algorithm, const CallShape& call,
                          std::uint32_t host_percent) noexcept {
  if (algorithm == AllreduceAlgorithm::TwoShot) {
    return nullptr;
  }
  if (call.in_place && call.gpus != 1) {
    return "in place needs two-shot";
  }
  if (algorithm == AllreduceAlgorithm::OneShotStriped) {
    if (call.ranks != 2 || call.gpus != 2) {
      return "striping needs two ranks on two GPUs";
    }
    if (host_percent == 0) {
      return "striping needs a host share";
    }
  }
  return nullptr;
}

Choice choose(const Table& table, std::string_view table_name, const CallShape& call,
              const ChoiceSettings& settings) {
  const auto share = [&](std::uint32_t rule_percent) { return settings.host_percent.value_or(rule_percent); };
  const char* forced_unsafe = settings.forced ? unsafe_reason(*settings.forced, call, share(0)) : nullptr;
  if (settings.forced && forced_unsafe == nullptr) {
    return {*settings.forced, share(0), "forced"};
  }
  // A forced algorithm the call cannot take says so, so a benchmark does not mistake what ran.
  const std::string overruled =
      forced_unsafe ? fmt::format(" (forced {}: {})", algorithm_name(*settings.forced), forced_unsafe) : "";
  for (std::size_t index = 0; index < table.rules.size(); ++index) {
    const Rule& rule = table.rules[index];
    if (matches(rule, call) && unsafe_reason(rule.algorithm, call, share(rule.host_percent)) == nullptr) {
      return {rule.algorithm, share(rule.host_percent),
              fmt::format("table:{} rule {}{}", table_name, index + 1, overruled)};
    }
  }
  const AllreduceAlgorithm fallback = unsafe_reason(AllreduceAlgorithm::OneShot, call, 0)
                                          ? AllreduceAlgorithm::TwoShot
                                          : AllreduceAlgorithm::OneShot;
  return {fallback, 0, "fallback" + overruled};
}

} // namespace commlens::runtime::tuning

namespace commlens::runtime::tuning {

std::uint64_t p2p_host_bytes(const PointToPointStripe& stripe, std::optional<std::uint32_t> forced_percent,
                             std::uint64_t bytes, bool same_gpu) {
  if (bytes < stripe.min_bytes || (same_gpu && !forced_percent)) {
    return 0;
  }
  const std::uint64_t percent = forced_percent.value_or(stripe.host_percent);
  constexpr std::uint64_t kGranule = 4096; // the peer copy's share ends on a page of the message
  return bytes * percent / 100 / kGranule * kGranule;
}

} // namespace commlens::runtime::tuning
