#pragma once
// What the tuning table's sections share: the GPU-count field, and reading JSON fields with errors
// that name where they are (TableError). Internal to tuning/.
#include "tuning_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace commlens::runtime::tuning::fields {

inline constexpr std::array<std::pair<GpuCount, const char*>, 4> kGpuCounts{
    {{GpuCount::One, "one"}, {GpuCount::Two, "two"}, {GpuCount::More, "more"}, {GpuCount::Any, "any"}}};

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

[[noreturn]] inline void fail(const std::string& where, std::string_view what) {
  throw TableError(fmt::format("{}: {}", where, what));
}

// "gpus": absent means any.
inline GpuCount parse_gpu_count(const nlohmann::json& object, const std::string& where) {
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

inline std::optional<bool> optional_flag(const nlohmann::json& rule, const char* key,
                                         const std::string& where) {
  const auto found = rule.find(key);
  if (found == rule.end() || found->is_null()) {
    return std::nullopt;
  }
  if (!found->is_boolean()) {
    fail(where + "." + key, "expected true, false or null");
  }
  return found->get<bool>();
}

inline std::optional<std::uint64_t> optional_bytes(const nlohmann::json& rule, const char* key,
                                                   const std::string& where) {
  const auto found = rule.find(key);
  if (found == rule.end() || found->is_null()) {
    return std::nullopt;
  }
  if (!found->is_number_unsigned()) {
    fail(where + "." + key, "expected a byte count (an integer >= 0) or null");
  }
  return found->get<std::uint64_t>();
}

// "min_ranks" and "max_ranks": absent or null means open; otherwise at least 1, min <= max.
inline RankRange parse_rank_range(const nlohmann::json& rule, const std::string& where) {
  RankRange range;
  const auto end = [&](const char* key) -> std::optional<int> {
    const auto found = rule.find(key);
    if (found == rule.end() || found->is_null()) {
      return std::nullopt;
    }
    if (!found->is_number_unsigned() || found->get<std::uint64_t>() < 1 ||
        found->get<std::uint64_t>() > 1u << 30) {
      fail(where + "." + key, "expected a rank count (an integer >= 1) or null");
    }
    return found->get<int>();
  };
  range.min_ranks = end("min_ranks");
  range.max_ranks = end("max_ranks");
  if (range.min_ranks && range.max_ranks && *range.min_ranks > *range.max_ranks) {
    fail(where + ".min_ranks", "above max_ranks");
  }
  return range;
}

// Written only when set, so tables measured at one rank count read as before.
inline void put_rank_range(nlohmann::ordered_json& object, const RankRange& range) {
  if (range.min_ranks) {
    object["min_ranks"] = *range.min_ranks;
  }
  if (range.max_ranks) {
    object["max_ranks"] = *range.max_ranks;
  }
}

// An object whose keys are all among `known`.
template <std::size_t N>
void expect_object_with(const nlohmann::json& object, const char* const (&known)[N],
                        const std::string& where) {
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

inline std::string optional_text(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto text = object.find(key);
  if (text == object.end()) {
    return {};
  }
  if (!text->is_string()) {
    fail(where + "." + key, "expected a string");
  }
  return text->get<std::string>();
}

} // namespace commlens::runtime::tuning::fields

namespace commlens::runtime::tuning::fields {

// A rule's optional "measured" object (rule_measurement.hpp), and writing it back.
OptionalMeasurement parse_rule_measurement(const nlohmann::json& rule, const std::string& where);
void put_rule_measurement(nlohmann::ordered_json& object, const OptionalMeasurement& measured);

} // namespace commlens::runtime::tuning::fields

namespace commlens::runtime::tuning {

// The table's "measurements" (format 2); throws TableError naming the part.
std::vector<Measurement> parse_measurements(const nlohmann::json& array);
nlohmann::ordered_json measurements_json(const std::vector<Measurement>& measurements);

// A "data_movement" rule (data_movement_rules.hpp); throws TableError naming `where`
// ("data_movement[1].gpus: ...").
MovementRule parse_movement_rule(const nlohmann::json& object, const std::string& where);
nlohmann::ordered_json movement_rule_json(const MovementRule& rule);

} // namespace commlens::runtime::tuning
