#include "setting_rules.hpp"

#include <charconv>

namespace commlens {

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (const std::string_view name = settings::trim(list.substr(0, comma)); !name.empty()) {
      names.emplace_back(name);
    }
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return names;
}

} // namespace commlens

namespace commlens::settings {

namespace {

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

} // namespace

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::optional<bool> parse_bool(std::string_view text) {
  for (std::string_view yes : {"1", "yes", "true", "on"}) {
    if (text == yes) {
      return true;
    }
  }
  for (std::string_view no : {"0", "no", "false", "off"}) {
    if (text == no) {
      return false;
    }
  }
  return std::nullopt;
}

std::string bool_text(bool value) {
  return value ? "1" : "0";
}

std::optional<std::uint64_t> parse_in_range(std::string_view text, std::uint64_t low, std::uint64_t high) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < low || value > high) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<std::string>> parse_name_list(std::string_view text, bool patterns) {
  std::vector<std::string> names = split_names(text);
  for (const std::string& name : names) {
    const std::string_view stem = patterns && name.ends_with('*')
                                      ? std::string_view(name).substr(0, name.size() - 1)
                                      : std::string_view(name);
    if (stem.empty() && !(patterns && name == "*")) {
      return std::nullopt;
    }
    if (!std::all_of(stem.begin(), stem.end(), is_name_character)) {
      return std::nullopt;
    }
  }
  return names;
}

bool is_known(std::string_view name, std::string_view known_list) {
  const auto known = split_names(known_list);
  return std::find(known.begin(), known.end(), name) != known.end();
}

std::string rejected_value_message(const std::string& key, const std::string& value,
                                   const std::string& accepted, const std::string& fallback) {
  return "commlens: " + key + "=" + value + " is not valid (accepted: " + accepted + "); using " + fallback;
}

bool store_path(const std::string& value, std::string& target) {
  if (!value.empty()) {
    target = value;
  }
  return !value.empty();
}

bool store_known(const std::string& value, std::string_view known_list, std::string& target) {
  const bool known = is_known(value, known_list);
  if (known) {
    target = value;
  }
  return known;
}

} // namespace commlens::settings
