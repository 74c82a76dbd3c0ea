#include "tree_rules.hpp"

#include "table_fields.hpp"
#include "tree_rules_format.hpp"

namespace commlens::runtime::tuning {

namespace {

using nlohmann::json;
using namespace fields;

constexpr const char* kTreeRuleKeys[] = {
    "collective", "gpus",       "ranks_share_gpu", "max_bytes", "min_ranks",     "max_ranks", "mps",
    "gpu_shape",  "node_shape", "nodes_shape",     "push",      "segment_bytes", "window",    "streams",
    "why",        "measured"};

bool matches(const TreeRule& rule, const TreeCall& call) {
  return (!rule.collective || *rule.collective == call.collective) &&
         gpu_count_matches(rule.gpus, call.gpus) &&
         (!rule.ranks_share_gpu || *rule.ranks_share_gpu == (call.gpus < call.ranks)) &&
         (!rule.mps || *rule.mps == call.mps) && (!rule.max_bytes || call.bytes <= *rule.max_bytes) &&
         rule.ranks.contains(call.ranks);
}

trees::Shape parse_level(const json& object, const char* key, trees::Shape absent, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) {
    return absent;
  }
  const auto shape = found->is_string() ? trees::parse_shape(found->get<std::string>()) : std::nullopt;
  if (!shape) {
    fail(where + "." + key, "expected \"flat\", \"chain\", \"binary\" or \"binomial\"");
  }
  return *shape;
}

std::uint64_t parse_bounded(const json& object, const char* key, std::uint64_t absent, std::uint64_t low,
                            std::uint64_t high, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) {
    return absent;
  }
  if (!found->is_number_unsigned() || found->get<std::uint64_t>() < low ||
      found->get<std::uint64_t>() > high) {
    fail(where + "." + key, fmt::format("expected an integer from {} to {}", low, high));
  }
  return found->get<std::uint64_t>();
}

TreeRule parse_tree_rule(const json& object, const std::string& where) {
  expect_object_with(object, kTreeRuleKeys, where);
  TreeRule rule;
  if (const auto collective = object.find("collective");
      collective != object.end() && !collective->is_null()) {
    const std::string name = collective->is_string() ? collective->get<std::string>() : "";
    if (name != "bcast" && name != "reduce") {
      fail(where + ".collective", "expected \"bcast\", \"reduce\" or null");
    }
    rule.collective = name == "bcast" ? RootedCollective::Bcast : RootedCollective::Reduce;
  }
  rule.gpus = parse_gpu_count(object, where);
  rule.ranks_share_gpu = optional_flag(object, "ranks_share_gpu", where);
  rule.max_bytes = optional_bytes(object, "max_bytes", where);
  rule.ranks = parse_rank_range(object, where);
  rule.mps = optional_flag(object, "mps", where);
  rule.push = optional_flag(object, "push", where).value_or(false);
  if (rule.push && rule.collective != RootedCollective::Bcast) {
    fail(where + ".push", "only a bcast rule pushes (\"collective\": \"bcast\")");
  }
  rule.shapes.gpu = parse_level(object, "gpu_shape", rule.shapes.gpu, where);
  rule.shapes.node = parse_level(object, "node_shape", rule.shapes.node, where);
  rule.shapes.nodes = parse_level(object, "nodes_shape", rule.shapes.nodes, where);
  rule.segment_bytes =
      parse_bounded(object, "segment_bytes", rule.segment_bytes, kMinSegmentBytes, kMaxSegmentBytes, where);
  rule.window =
      static_cast<std::uint32_t>(parse_bounded(object, "window", rule.window, 1, kMaxWindow, where));
  rule.streams =
      static_cast<std::uint32_t>(parse_bounded(object, "streams", rule.streams, 1, kMaxStreams, where));
  rule.why = optional_text(object, "why", where);
  rule.measured = parse_rule_measurement(object, where);
  return rule;
}

} // namespace

const char* collective_name(RootedCollective collective) noexcept {
  return collective == RootedCollective::Reduce ? "reduce" : "bcast";
}

std::vector<TreeRule> parse_tree_rules(const json& array) {
  if (!array.is_array()) {
    fail("trees", "expected an array of tree rules");
  }
  std::vector<TreeRule> rules;
  for (std::size_t index = 0; index < array.size(); ++index) {
    rules.push_back(parse_tree_rule(array[index], fmt::format("trees[{}]", index)));
  }
  return rules;
}

nlohmann::ordered_json tree_rules_json(const std::vector<TreeRule>& rules) {
  using nlohmann::ordered_json;
  ordered_json array = ordered_json::array();
  for (const TreeRule& rule : rules) {
    ordered_json object;
    object["collective"] = rule.collective ? ordered_json(collective_name(*rule.collective)) : ordered_json();
    object["gpus"] = gpu_count_name(rule.gpus);
    object["ranks_share_gpu"] = rule.ranks_share_gpu ? ordered_json(*rule.ranks_share_gpu) : ordered_json();
    object["max_bytes"] = rule.max_bytes ? ordered_json(*rule.max_bytes) : ordered_json();
    put_rank_range(object, rule.ranks);
    if (rule.mps) { // written only when set, so tables without it read as before
      object["mps"] = *rule.mps;
    }
    object["gpu_shape"] = trees::shape_name(rule.shapes.gpu);
    object["node_shape"] = trees::shape_name(rule.shapes.node);
    object["nodes_shape"] = trees::shape_name(rule.shapes.nodes);
    if (rule.push) {
      object["push"] = true;
    }
    object["segment_bytes"] = rule.segment_bytes;
    object["window"] = rule.window;
    object["streams"] = rule.streams;
    if (!rule.why.empty()) {
      object["why"] = rule.why;
    }
    put_rule_measurement(object, rule.measured);
    array.push_back(std::move(object));
  }
  return array;
}

TreeChoice choose_tree(const Table& table, std::string_view table_name, const TreeCall& call) {
  for (std::size_t index = 0; index < table.trees.size(); ++index) {
    const TreeRule& rule = table.trees[index];
    if (matches(rule, call)) {
      return {rule.shapes,
              rule.segment_bytes,
              rule.window,
              rule.streams,
              fmt::format("table:{} tree rule {}", table_name, index + 1),
              rule.push};
    }
  }
  // No rule: the defaults of TreeRule (flat on a GPU, binomial above, 256 KiB, 4 in flight, one
  // stream).
  const TreeRule fixed;
  return {fixed.shapes, fixed.segment_bytes, fixed.window, fixed.streams, "fallback"};
}

} // namespace commlens::runtime::tuning
