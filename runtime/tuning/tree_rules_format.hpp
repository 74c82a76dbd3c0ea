#pragma once
// The table's "trees" section in JSON (tuning_table.cpp reads and writes it through these).
#include "tuning_table.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace commlens::runtime::tuning {

// Throws TableError naming the part ("trees[1].segment_bytes: ...").
std::vector<TreeRule> parse_tree_rules(const nlohmann::json& array);
nlohmann::ordered_json tree_rules_json(const std::vector<TreeRule>& rules);

} // namespace commlens::runtime::tuning
