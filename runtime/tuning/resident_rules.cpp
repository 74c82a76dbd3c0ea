#include "resident_rules.hpp"

#include "table_fields.hpp"

#include <algorithm>

namespace commlens::runtime::tuning {

namespace {

using namespace fields;

constexpr const char* kResidentRuleKeys[] = {"collective", "max_bytes", "min_ranks",
                                             "max_ranks",  "why",       "measured"};

ResidentRule parse_resident_rule(const nlohmann::json& object, const std::string& where) {
  expect_object_with(object, kResidentRuleKeys, where);
  ResidentRule rule;
  const auto collective = object.find("collective");
  if (collective == object.end() || !collective->is_string() ||
      std::ranges::find(kResidentCollectives, collective->get<std::string>()) ==
          std::end(kResidentCollectives)) {
    fail(where + ".collective",
         fmt::format("expected one of \"{}\"", fmt::join(kResidentCollectives, "\", \"")));
  }
  rule.collective = collective->get<std::string>();
  const std::optional<std::uint64_t> max_bytes = optional_bytes(object, "max_bytes", where);
  if (!max_bytes) {
    fail(where + ".max_bytes", "expected the largest contribution the resident kernel takes (0: none)");
  }
  rule.max_bytes = *max_bytes;
  rule.ranks = parse_rank_range(object, where);
  rule.why = optional_text(object, "why", where);
  rule.measured = parse_rule_measurement(object, where);
  return rule;
}

} // namespace

ResidentLimit resident_limit(const Table& table, std::string_view collective, int ranks) noexcept {
  for (std::size_t index = 0; index < table.resident.size(); ++index) {
    const ResidentRule& rule = table.resident[index];
    if (rule.collective == collective && rule.ranks.contains(ranks)) {
      return {rule.max_bytes, index + 1};
    }
  }
  return {collective == "allreduce" ? kDefaultResidentAllreduceBytes : ~std::uint64_t{0}, 0};
}

std::string resident_limit_source(std::string_view table_name, const ResidentLimit& limit) {
  return limit.rule == 0 ? std::string("default")
                         : fmt::format("table:{} resident rule {}", table_name, limit.rule);
}

std::vector<ResidentRule> parse_resident_rules(const nlohmann::json& array) {
  if (!array.is_array()) {
    fail("resident", "expected an array of resident rules");
  }
  std::vector<ResidentRule> rules;
  for (std::size_t index = 0; index < array.size(); ++index) {
    rules.push_back(parse_resident_rule(array[index], fmt::format("resident[{}]", index)));
  }
  return rules;
}

nlohmann::ordered_json resident_rules_json(std::span<const ResidentRule> rules) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const ResidentRule& rule : rules) {
    nlohmann::ordered_json object;
    object["collective"] = rule.collective;
    object["max_bytes"] = rule.max_bytes;
    put_rank_range(object, rule.ranks);
    if (!rule.why.empty()) {
      object["why"] = rule.why;
    }
    put_rule_measurement(object, rule.measured);
    array.push_back(std::move(object));
  }
  return array;
}

} // namespace commlens::runtime::tuning
