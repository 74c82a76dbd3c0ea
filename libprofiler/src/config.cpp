#include "commlens/profiler/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string_view>

extern char** environ;

namespace commlens {

namespace {

constexpr std::string_view kPrefix = "COMMLENS_";

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

std::optional<std::uint64_t> parse_in_range(std::string_view text, std::uint64_t low, std::uint64_t high) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < low || value > high) {
    return std::nullopt;
  }
  return value;
}

std::optional<CollectorSet> parse_collectors(std::string_view text) {
  if (text == "all") {
    return CollectorSet{};
  }
  CollectorSet set{false, false, false, false};
  if (text == "none") {
    return set;
  }
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view name = trim(text.substr(0, comma));
    if (name == "pmpi") {
      set.pmpi = true;
    } else if (name == "mpit") {
      set.mpit = true;
    } else if (name == "cupti") {
      set.cupti = true;
    } else if (name == "nvtx") {
      set.nvtx = true;
    } else {
      return std::nullopt;
    }
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return set;
}

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// A comma list of identifiers, each optionally ending in '*' when `patterns` allows it.
std::optional<RuntimeMode> parse_runtime_mode(std::string_view text) {
  for (const RuntimeMode mode : {RuntimeMode::Off, RuntimeMode::On, RuntimeMode::AB}) {
    if (text == runtime_mode_name(mode)) {
      return mode;
    }
  }
  return std::nullopt;
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
    for (char c : stem) {
      if (!is_name_character(c)) {
        return std::nullopt;
      }
    }
  }
  return names;
}

std::optional<std::vector<std::string>> parse_pvars(std::string_view text) {
  if (text == "default") {
    return split_names(kDefaultPvars);
  }
  if (text == "all") {
    return std::vector<std::string>{"*"};
  }
  if (text == "none") {
    return std::vector<std::string>{};
  }
  auto names = parse_name_list(text, true);
  return names && !names->empty() ? names : std::nullopt;
}

// Settings from the file named by COMMLENS_CONFIG: KEY=VALUE lines, '#' starts a comment.
void read_config_file(const std::string& path, std::map<std::string, std::string>& values,
                      const Config::Warn& warn) {
  std::ifstream file(path);
  if (!file) {
    warn(fmt::format("commlens: COMMLENS_CONFIG={} cannot be read; using the environment only", path));
    return;
  }
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    std::string_view text = trim(std::string_view(line).substr(0, line.find('#')));
    if (text.empty()) {
      continue;
    }
    const auto equals = text.find('=');
    const std::string_view key = trim(text.substr(0, equals));
    if (equals == std::string_view::npos || !key.starts_with(kPrefix)) {
      warn(fmt::format("commlens: {}:{}: expected COMMLENS_NAME=VALUE; line ignored", path, number));
      continue;
    }
    values.emplace(std::string(key), std::string(trim(text.substr(equals + 1))));
  }
}

} // namespace

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (const std::string_view name = trim(list.substr(0, comma)); !name.empty()) {
      names.emplace_back(name);
    }
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return names;
}

const char* mode_name(Mode mode) noexcept {
  return mode == Mode::Trace ? "trace" : "summary";
}

const char* runtime_mode_name(RuntimeMode mode) noexcept {
  switch (mode) {
  case RuntimeMode::On:
    return "on";
  case RuntimeMode::AB:
    return "ab";
  case RuntimeMode::Off:
    break;
  }
  return "off";
}

Config Config::from_environment(const Warn& warn, const Lookup& lookup) {
  Config config;
  std::map<std::string, std::string>& values = config.raw;
  if (lookup) {
    for (const char* key : {"COMMLENS_OUTPUT",
                            "COMMLENS_MODE",
                            "COMMLENS_COLLECTORS",
                            "COMMLENS_BUFFER_EVENTS",
                            "COMMLENS_SUMMARY_SLOTS",
                            "COMMLENS_FLUSH_MS",
                            "COMMLENS_MERGE",
                            "COMMLENS_QUIET",
                            "COMMLENS_KEEP_RANK_FILES",
                            "COMMLENS_CONFIG",
                            "COMMLENS_PVARS",
                            "COMMLENS_PVAR_PERIOD_MS",
                            "COMMLENS_PVAR_CALLS",
                            "COMMLENS_RUNTIME",
                            "COMMLENS_RUNTIME_COLLECTIVES",
                            "COMMLENS_RUNTIME_HOST_PERCENT",
                            "COMMLENS_RUNTIME_ALGORITHM",
                            "COMMLENS_RUNTIME_TUNING",
                            "COMMLENS_RUNTIME_RANKS_PER_NODE",
                            "COMMLENS_RUNTIME_PATHS",
                            "COMMLENS_RUNTIME_BACKGROUND_OPENS"}) {
      if (const char* value = lookup(key)) {
        values.emplace(key, value);
      }
    }
  } else {
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      const std::string_view text(*entry);
      const auto equals = text.find('=');
      if (text.starts_with(kPrefix) && equals != std::string_view::npos) {
        values.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
      }
    }
  }
  // The environment wins over the file: it is the more specific setting for one run.
  if (const auto file = values.find("COMMLENS_CONFIG"); file != values.end()) {
    read_config_file(file->second, values, warn);
  }

  const auto reject = [&](const std::string& key, const std::string& value, std::string_view accepted,
                          std::string_view fallback) {
    warn(
        fmt::format("commlens: {}={} is not valid (accepted: {}); using {}", key, value, accepted, fallback));
  };
  for (const auto& [key, value] : values) {
    if (key == "COMMLENS_OUTPUT") {
      if (value.empty()) {
        reject(key, value, "a directory path", config.output_directory);
      } else {
        config.output_directory = value;
      }
    } else if (key == "COMMLENS_MODE") {
      if (value == "summary" || value == "trace") {
        config.mode = value == "trace" ? Mode::Trace : Mode::Summary;
      } else {
        reject(key, value, "summary, trace", "summary");
      }
    } else if (key == "COMMLENS_COLLECTORS") {
      if (auto set = parse_collectors(value)) {
        config.collectors = *set;
      } else {
        reject(key, value, "all, none, or a comma list of pmpi, mpit, cupti, nvtx", "all");
      }
    } else if (key == "COMMLENS_BUFFER_EVENTS") {
      if (auto events = parse_in_range(value, 1024, 1u << 26)) {
        config.buffer_events = *events;
      } else {
        reject(key, value, "an integer from 1024 to 67108864", std::to_string(config.buffer_events));
      }
    } else if (key == "COMMLENS_SUMMARY_SLOTS") {
      if (auto slots = parse_in_range(value, 64, 1u << 22)) {
        config.summary_slots = *slots;
      } else {
        reject(key, value, "an integer from 64 to 4194304", std::to_string(config.summary_slots));
      }
    } else if (key == "COMMLENS_FLUSH_MS") {
      if (auto interval = parse_in_range(value, 10, 1000)) {
        config.flush_interval_ms = static_cast<std::uint32_t>(*interval);
      } else {
        reject(key, value, "an integer from 10 to 1000", std::to_string(config.flush_interval_ms));
      }
    } else if (key == "COMMLENS_PVARS") {
      if (auto names = parse_pvars(value)) {
        config.pvars = std::move(*names);
      } else {
        reject(key, value,
               "default, all, none, or a comma list of pvar names (a trailing * matches a prefix)",
               "default");
      }
    } else if (key == "COMMLENS_PVAR_PERIOD_MS") {
      if (auto period = parse_in_range(value, 1, 60000)) {
        config.pvar_period_ms = static_cast<std::uint32_t>(*period);
      } else {
        reject(key, value, "an integer from 1 to 60000", std::to_string(config.pvar_period_ms));
      }
    } else if (key == "COMMLENS_PVAR_CALLS") {
      auto names = parse_name_list(value, false);
      const bool all_mpi = names && std::all_of(names->begin(), names->end(), [](const std::string& name) {
                             return name.starts_with("MPI_");
                           });
      if (all_mpi) {
        config.pvar_calls = std::move(*names);
      } else {
        reject(key, value, "a comma list of MPI function names (MPI_Barrier,MPI_Wait,...)", "none");
      }
    } else if (key == "COMMLENS_RUNTIME") {
      if (auto mode = parse_runtime_mode(value)) {
        config.runtime = *mode;
      } else {
        reject(key, value, "off, on, ab", "off");
      }
    } else if (key == "COMMLENS_RUNTIME_HOST_PERCENT") {
      if (auto percent = parse_in_range(value, 0, 50)) {
        config.runtime_host_percent = static_cast<std::uint32_t>(*percent);
      } else {
        reject(key, value, "an integer from 0 to 50", "the tuning table's share");
      }
    } else if (key == "COMMLENS_RUNTIME_ALGORITHM") {
      const auto known = split_names(kRuntimeAlgorithms);
      if (std::find(known.begin(), known.end(), value) != known.end()) {
        config.runtime_algorithm = value;
      } else {
        reject(key, value, kRuntimeAlgorithms, "auto");
      }
    } else if (key == "COMMLENS_RUNTIME_TUNING") {
      // The runtime reads the file (and says what is wrong with it) when it starts.
      if (value.empty()) {
        reject(key, value, "the path of a tuning table (JSON)", "the shipped table");
      } else {
        config.runtime_tuning_file = value;
      }
    } else if (key == "COMMLENS_RUNTIME_PATHS") {
      if (value.empty()) {
        reject(key, value, "off, or the path of the node's copy-path file",
               "the file in the cache directory");
      } else {
        config.runtime_paths = value;
      }
    } else if (key == "COMMLENS_RUNTIME_RANKS_PER_NODE") {
      if (auto ranks = parse_in_range(value, 0, 1 << 20)) {
        config.runtime_ranks_per_node = static_cast<std::uint32_t>(*ranks);
      } else {
        reject(key, value, "0 (the real nodes) or a number of ranks", "0");
      }
    } else if (key == "COMMLENS_RUNTIME_COLLECTIVES") {
      const auto known = split_names(kRuntimeCollectives);
      auto names = parse_name_list(value, false);
      const bool all_known = names && std::all_of(names->begin(), names->end(), [&](const std::string& name) {
                               return std::find(known.begin(), known.end(), name) != known.end();
                             });
      if (all_known) {
        config.runtime_collectives = std::move(*names);
      } else {
        reject(key, value, fmt::format("a comma list of {}", kRuntimeCollectives),
               kRuntimeDefaultCollectives);
      }
    } else if (key == "COMMLENS_MERGE" || key == "COMMLENS_QUIET" || key == "COMMLENS_KEEP_RANK_FILES" ||
               key == "COMMLENS_RUNTIME_BACKGROUND_OPENS") {
      bool& target = key == "COMMLENS_MERGE"             ? config.merge_at_finalize
                     : key == "COMMLENS_QUIET"           ? config.quiet
                     : key == "COMMLENS_KEEP_RANK_FILES" ? config.keep_rank_files
                                                         : config.runtime_background_opens;
      if (auto flag = parse_bool(value)) {
        target = *flag;
      } else {
        reject(key, value, "1, 0, yes, no, true, false, on, off", target ? "1" : "0");
      }
    }
  }
  return config;
}

} // namespace commlens
