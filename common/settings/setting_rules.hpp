#pragma once
// A table of COMMLENS_* settings read into one struct. Each rule turns its variable's text into a
// field of the struct; a rejected value is reported once, naming the variable, what it accepts and
// the value that stays, and profiling goes on. The profiler's settings (libprofiler/src/config.cpp)
// and the GPU runtime's (contract/runtime_settings.cpp) are two such tables over one map of values,
// so both reject bad values in the same words.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commlens {

// "a, b,c" -> {"a", "b", "c"}; empty names are dropped.
std::vector<std::string> split_names(std::string_view list);

// One setting as the user guide's settings table shows it: its variable, the values it accepts and
// its default, in the words of the warnings.
struct SettingDescription {
  std::string key;
  std::string accepted;
  std::string default_value;
};

} // namespace commlens

namespace commlens::settings {

// Receives one complete message per bad value.
using Warn = std::function<void(const std::string&)>;

// One COMMLENS_* setting of a Target: `apply` stores an accepted value and says whether it was
// accepted; `fallback` names what a rejected value leaves (the default, as the warning says it).
template <typename Target> struct SettingRule {
  std::string key;
  std::string accepted;
  bool (*apply)(Target& target, const std::string& value);
  std::string (*fallback)(const Target& target);
};

inline constexpr std::string_view kBoolValues = "1, 0, yes, no, true, false, on, off";

// Without leading and trailing blanks (spaces, tabs, carriage returns).
std::string_view trim(std::string_view text);
// One of kBoolValues, else nullopt.
std::optional<bool> parse_bool(std::string_view text);
std::string bool_text(bool value);
// A decimal integer from low to high, nothing else.
std::optional<std::uint64_t> parse_in_range(std::string_view text, std::uint64_t low, std::uint64_t high);
// A comma list of identifiers (letters, digits, '_', '.'), each optionally ending in '*' when
// `patterns` allows it.
std::optional<std::vector<std::string>> parse_name_list(std::string_view text, bool patterns);
// Whether `name` is one of the comma list `known_list`.
bool is_known(std::string_view name, std::string_view known_list);
// The warning for a rejected value.
std::string rejected_value_message(const std::string& key, const std::string& value,
                                   const std::string& accepted, const std::string& fallback);

// The value whose name (`name(value)`) is `text`, among `values`.
template <typename Enum, std::size_t N, typename Name>
std::optional<Enum> parse_named(std::string_view text, const Enum (&values)[N], Name name) {
  for (const Enum value : values) {
    if (text == name(value)) {
      return value;
    }
  }
  return std::nullopt;
}

// The store_* helpers store what parsed into `target` and say whether it did: what a rule's
// `apply` returns.
template <typename Value> bool store(std::optional<Value> parsed, Value& target) {
  if (parsed) {
    target = std::move(*parsed);
  }
  return parsed.has_value();
}

template <typename Number>
bool store_in_range(const std::string& value, std::uint64_t low, std::uint64_t high, Number& target) {
  const auto parsed = parse_in_range(value, low, high);
  if (parsed) {
    target = static_cast<Number>(*parsed);
  }
  return parsed.has_value();
}

// An optional number: unset means "someone else decides" (a tuning table), set only when accepted.
template <typename Number>
bool store_in_range(const std::string& value, std::uint64_t low, std::uint64_t high,
                    std::optional<Number>& target) {
  Number number{};
  const bool accepted = store_in_range(value, low, high, number);
  if (accepted) {
    target = number;
  }
  return accepted;
}

// A path: anything but empty.
bool store_path(const std::string& value, std::string& target);
// One name of the comma list `known_list`.
bool store_known(const std::string& value, std::string_view known_list, std::string& target);

// Applies every value whose key has a rule to `target`, in the order of `values`; each rejected
// value is reported to `warn` once and leaves the target's field as it was. Keys without a rule are
// not this table's: they are left alone.
template <typename Target>
void apply_rules(std::span<const SettingRule<Target>> rules, const std::map<std::string, std::string>& values,
                 Target& target, const Warn& warn) {
  for (const auto& [key, value] : values) {
    const auto rule = std::find_if(rules.begin(), rules.end(),
                                   [&](const SettingRule<Target>& each) { return each.key == key; });
    if (rule != rules.end() && !rule->apply(target, value)) {
      warn(rejected_value_message(key, value, rule->accepted, rule->fallback(target)));
    }
  }
}

// Every rule's variable, accepted values and default (the fallback of a default-built Target).
template <typename Target>
std::vector<SettingDescription> describe_rules(std::span<const SettingRule<Target>> rules) {
  const Target defaults{};
  std::vector<SettingDescription> descriptions;
  for (const SettingRule<Target>& rule : rules) {
    descriptions.push_back({rule.key, rule.accepted, rule.fallback(defaults)});
  }
  return descriptions;
}

} // namespace commlens::settings
