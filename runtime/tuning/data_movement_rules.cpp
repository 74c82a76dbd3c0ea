#include "data_movement_rules.hpp"

#include "table_fields.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace commlens::runtime::tuning {

namespace {

using nlohmann::json;
using namespace fields;

constexpr const char* kMovementKeys[] = {
    "collectives", "gpus",      "ranks_share_gpu", "mps", "max_block_bytes",
    "min_ranks",   "max_ranks", "algorithm",       "why", "measured"};
constexpr MovementAlgorithm kMovementAlgorithms[] = {MovementAlgorithm::Direct, MovementAlgorithm::GpuLeader,
                                                     MovementAlgorithm::Staged};

bool matches(const MovementRule& rule, const MovementShape& call) {
  return (rule.collectives.empty() ||
          std::ranges::find(rule.collectives, call.collective) != rule.collectives.end()) &&
         gpu_count_matches(rule.gpus, call.gpus) &&
         (!rule.ranks_share_gpu || *rule.ranks_share_gpu == (call.gpus < call.ranks)) &&
         (!rule.mps || *rule.mps == call.mps) &&
         (!rule.max_block_bytes || call.block_bytes <= *rule.max_block_bytes) &&
         rule.ranks.contains(call.ranks);
}

std::vector<Collective> parse_collectives(const json& object, const std::string& where) {
  const auto names = object.find("collectives");
  if (names == object.end() || names->is_null()) {
    return {};
  }
  if (!names->is_array()) {
    fail(where + ".collectives", "expected an array of collective names or null (every one)");
  }
  std::vector<Collective> collectives;
  for (const json& name : *names) {
    const auto parsed = name.is_string() ? parse_collective(name.get<std::string>()) : std::nullopt;
    if (!parsed) {
      fail(where + ".collectives",
           "expected \"allgather\", \"gather\", \"scatter\", \"alltoall\", \"reduce_scatter_block\" or "
           "\"reduce_scatter\"");
    }
    collectives.push_back(*parsed);
  }
  return collectives;
}

} // namespace

const char* collective_name(Collective collective) noexcept {
  switch (collective) {
  case Collective::Gather:
    return "gather";
  case Collective::Scatter:
    return "scatter";
  case Collective::Alltoall:
    return "alltoall";
  case Collective::ReduceScatterBlock:
    return "reduce_scatter_block";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::Allgather:
    break;
  }
  return "allgather";
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const Collective collective : kCollectives) {
    if (name == collective_name(collective)) {
      return collective;
    }
  }
  return std::nullopt;
}

const char* movement_algorithm_name(MovementAlgorithm algorithm) noexcept {
  switch (algorithm) {
  case MovementAlgorithm::GpuLeader:
    return "gpu_leader";
  case MovementAlgorithm::Staged:
    return "staged";
  case MovementAlgorithm::Direct:
    break;
  }
  return "direct";
}

std::optional<MovementAlgorithm> parse_movement_algorithm(std::string_view name) {
  for (const MovementAlgorithm algorithm : kMovementAlgorithms) {
    if (name == movement_algorithm_name(algorithm)) {
      return algorithm;
    }
  }
  return std::nullopt;
}

MovementRule parse_movement_rule(const json& object, const std::string& where) {
  expect_object_with(object, kMovementKeys, where);
  MovementRule rule;
  rule.collectives = parse_collectives(object, where);
  rule.gpus = parse_gpu_count(object, where);
  rule.ranks_share_gpu = optional_flag(object, "ranks_share_gpu", where);
  rule.mps = optional_flag(object, "mps", where);
  rule.max_block_bytes = optional_bytes(object, "max_block_bytes", where);
  rule.ranks = parse_rank_range(object, where);
  const auto algorithm = object.find("algorithm");
  if (algorithm == object.end()) {
    fail(where, "no \"algorithm\"");
  }
  const auto parsed =
      algorithm->is_string() ? parse_movement_algorithm(algorithm->get<std::string>()) : std::nullopt;
  if (!parsed) {
    fail(where + ".algorithm", "expected \"direct\", \"gpu_leader\" or \"staged\"");
  }
  rule.algorithm = *parsed;
  rule.why = optional_text(object, "why", where);
  rule.measured = parse_rule_measurement(object, where);
  return rule;
}

nlohmann::ordered_json movement_rule_json(const MovementRule& rule) {
  using nlohmann::ordered_json;
  ordered_json object;
  if (rule.collectives.empty()) {
    object["collectives"] = ordered_json();
  } else {
    object["collectives"] = ordered_json::array();
    for (const Collective collective : rule.collectives) {
      object["collectives"].push_back(collective_name(collective));
    }
  }
  object["gpus"] = gpu_count_name(rule.gpus);
  object["ranks_share_gpu"] = rule.ranks_share_gpu ? ordered_json(*rule.ranks_share_gpu) : ordered_json();
  if (rule.mps) { // written only when set, so tables without it read as before
    object["mps"] = *rule.mps;
  }
  object["max_block_bytes"] = rule.max_block_bytes ? ordered_json(*rule.max_block_bytes) : ordered_json();
  put_rank_range(object, rule.ranks);
  object["algorithm"] = movement_algorithm_name(rule.algorithm);
  if (!rule.why.empty()) {
    object["why"] = rule.why;
  }
  put_rule_measurement(object, rule.measured);
  return object;
}

MovementChoice choose_movement(const std::vector<MovementRule>& rules, std::string_view table_name,
                               const MovementShape& call) {
  for (std::size_t index = 0; index < rules.size(); ++index) {
    if (matches(rules[index], call)) {
      return {rules[index].algorithm, fmt::format("table:{} data_movement rule {}", table_name, index + 1)};
    }
  }
  return {MovementAlgorithm::Direct, "fallback"};
}

} // namespace commlens::runtime::tuning
