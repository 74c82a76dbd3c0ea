#pragma once
// What the parsers of the table's sections share (tuning_table.cpp, tree_rules.cpp): errors that
// name the part, key checks, optional flags and the GPU-count names.
#include "tuning_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

namespace commlens::runtime::tuning::json_helpers {

using nlohmann::json;

inline constexpr std::array<std::pair<GpuCount, const char*>, 4> kGpuCounts{
    {{GpuCount::One, "one"}, {GpuCount::Two, "two"}, {GpuCount::More, "more"}, {GpuCount::Any, "any"}}};

[[noreturn]] inline void fail(const std::string& where, std::string_view what) {
  throw TableError(fmt::format("{}: {}", where, what));
}

inline const char* gpu_count_name(GpuCount count) {
  return std::find_if(kGpuCounts.begin(), kGpuCounts.end(),
                      [&](const auto& entry) { return entry.first == count; })
      ->second;
}

inline bool gpu_count_matches(GpuCount count, int gpus) {
  switch (count) {
  case GpuCount::One:
    return gpus == 1;
  case GpuCount::Two:
    return gpus == 2;
  case GpuCount::More:
    return gpus > 2;
  case GpuCount::Any:
    break;
  }
  return true;
}

// "gpus" of a rule (absent: any).
inline GpuCount parse_gpu_count(const json& object, const std::string& where) {
  const auto gpus = object.find("gpus");
  if (gpus == object.end()) {
    return GpuCount::Any;
  }
  const auto named = std::find_if(kGpuCounts.begin(), kGpuCounts.end(), [&](const auto& entry) {
    return gpus->is_string() && gpus->get<std::string>() == entry.second;
  });
  if (named == kGpuCounts.end()) {
    fail(where + ".gpus", "expected \"one\", \"two\", \"more\" or \"any\"");
  }
  return named->first;
}

inline std::optional<bool> optional_flag(const json& rule, const char* key, const std::string& where) {
  const auto found = rule.find(key);
  if (found == rule.end() || found->is_null()) {
    return std::nullopt;
  }
  if (!found->is_boolean()) {
    fail(where + "." + key, "expected true, false or null");
  }
  return found->get<bool>();
}

// "max_bytes" (absent or null: any size).
inline std::optional<std::uint64_t> optional_max_bytes(const json& object, const std::string& where) {
  const auto max_bytes = object.find("max_bytes");
  if (max_bytes == object.end() || max_bytes->is_null()) {
    return std::nullopt;
  }
  if (!max_bytes->is_number_unsigned()) {
    fail(where + ".max_bytes", "expected a byte count (an integer >= 0) or null");
  }
  return max_bytes->get<std::uint64_t>();
}

// "why" (absent: left as it is).
inline void parse_why(const json& object, const std::string& where, std::string* why) {
  if (const auto text = object.find("why"); text != object.end()) {
    if (!text->is_string()) {
      fail(where + ".why", "expected a string");
    }
    *why = text->get<std::string>();
  }
}

// An object whose keys are all among `known`.
template <std::size_t N>
void expect_object_with(const json& object, const char* const (&known)[N], const std::string& where) {
  if (!object.is_object()) {
    fail(where, "expected an object");
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find_if(std::begin(known), std::end(known), [&](const char* name) { return key == name; }) ==
        std::end(known)) {
      fail(where, fmt::format("unknown key \"{}\" (accepted: {})", key, fmt::join(known, ", ")));
    }
  }
}

} // namespace commlens::runtime::tuning::json_helpers
