#include "commlens/profiler/config.hpp"
#include "commlens/profiler/settings.hpp"

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

std::optional<RuntimeMode> parse_runtime_mode(std::string_view text) {
  for (const RuntimeMode mode : {RuntimeMode::Off, RuntimeMode::On, RuntimeMode::AB}) {
    if (text == runtime_mode_name(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

// A comma list of identifiers, each optionally ending in '*' when `patterns` allows it.
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

// One COMMLENS_* setting: `apply` stores an accepted value in the config and says whether it was
// accepted; `fallback` names what a rejected value leaves (the default, as the warning says it).
struct Setting {
  std::string key;
  std::string accepted;
  bool (*apply)(Config& config, const std::string& value);
  std::string (*fallback)(const Config& config);
};

template <typename Value> bool store(std::optional<Value> parsed, Value& target) {
  if (parsed) {
    target = std::move(*parsed);
  }
  return parsed.has_value();
}

template <typename Target>
bool store_in_range(const std::string& value, std::uint64_t low, std::uint64_t high, Target& target) {
  const auto parsed = parse_in_range(value, low, high);
  if (parsed) {
    target = static_cast<Target>(*parsed);
  }
  return parsed.has_value();
}

bool store_path(const std::string& value, std::string& target) {
  if (!value.empty()) {
    target = value;
  }
  return !value.empty();
}

bool is_known(std::string_view name, std::string_view known_list) {
  const auto known = split_names(known_list);
  return std::find(known.begin(), known.end(), name) != known.end();
}

constexpr std::string_view kBoolValues = "1, 0, yes, no, true, false, on, off";

std::string bool_text(bool value) {
  return value ? "1" : "0";
}

// Every setting the profiler reads, in the order of docs/user-guide.md's table (a test keeps the
// two in step).
const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"COMMLENS_OUTPUT", "a directory path",
       [](Config& c, const std::string& v) { return store_path(v, c.output_directory); },
       [](const Config& c) { return c.output_directory; }},
      {"COMMLENS_MODE", "summary, trace",
       [](Config& c, const std::string& v) {
         const bool known = v == "summary" || v == "trace";
         if (known) {
           c.mode = v == "trace" ? Mode::Trace : Mode::Summary;
         }
         return known;
       },
       [](const Config& c) { return std::string(mode_name(c.mode)); }},
      {"COMMLENS_COLLECTORS", "all, none, or a comma list of pmpi, mpit, cupti, nvtx",
       [](Config& c, const std::string& v) { return store(parse_collectors(v), c.collectors); },
       [](const Config&) { return std::string("all"); }},
      {"COMMLENS_BUFFER_EVENTS", "an integer from 1024 to 67108864",
       [](Config& c, const std::string& v) { return store_in_range(v, 1024, 1u << 26, c.buffer_events); },
       [](const Config& c) { return std::to_string(c.buffer_events); }},
      {"COMMLENS_SUMMARY_SLOTS", "an integer from 64 to 4194304",
       [](Config& c, const std::string& v) { return store_in_range(v, 64, 1u << 22, c.summary_slots); },
       [](const Config& c) { return std::to_string(c.summary_slots); }},
      {"COMMLENS_FLUSH_MS", "an integer from 10 to 1000",
       [](Config& c, const std::string& v) { return store_in_range(v, 10, 1000, c.flush_interval_ms); },
       [](const Config& c) { return std::to_string(c.flush_interval_ms); }},
      {"COMMLENS_MERGE", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.merge_at_finalize); },
       [](const Config& c) { return bool_text(c.merge_at_finalize); }},
      {"COMMLENS_QUIET", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.quiet); },
       [](const Config& c) { return bool_text(c.quiet); }},
      {"COMMLENS_KEEP_RANK_FILES", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.keep_rank_files); },
       [](const Config& c) { return bool_text(c.keep_rank_files); }},
      {"COMMLENS_RANK_PAGES", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.rank_pages); },
       [](const Config& c) { return bool_text(c.rank_pages); }},
      {"COMMLENS_SHARED_OUTPUT", "auto, yes, no",
       [](Config& c, const std::string& v) {
         const bool known = v == "auto" || v == "yes" || v == "no";
         if (known) {
           c.shared_output = v == "yes"  ? SharedOutput::Yes
                             : v == "no" ? SharedOutput::No
                                         : SharedOutput::Auto;
         }
         return known;
       },
       [](const Config& c) {
         return std::string(c.shared_output == SharedOutput::Yes  ? "yes"
                            : c.shared_output == SharedOutput::No ? "no"
                                                                  : "auto");
       }},
      {"COMMLENS_START_AT_NCCL", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.start_at_nccl); },
       [](const Config& c) { return bool_text(c.start_at_nccl); }},
      {"COMMLENS_KERNELS", "off, steps, all",
       [](Config& c, const std::string& v) {
         for (const KernelRecording recording :
              {KernelRecording::Off, KernelRecording::Steps, KernelRecording::All}) {
           if (v == kernel_recording_name(recording)) {
             c.kernels = recording;
             return true;
           }
         }
         return false;
       },
       [](const Config& c) { return std::string(kernel_recording_name(c.kernels)); }},
      {"COMMLENS_KERNEL_STEPS", "step numbers and spans from 1, in order (6-8 or 6-8,100-102)",
       [](Config& c, const std::string& v) { return store(parse_step_spans(v), c.kernel_steps); },
       [](const Config& c) { return step_spans_text(c.kernel_steps); }},
      {"COMMLENS_STEP_RANGE", "an NVTX range name, or none",
       [](Config& c, const std::string& v) {
         c.step_range = v == "none" ? std::string() : v;
         return !v.empty();
       },
       [](const Config& c) { return c.step_range; }},
      // Read before the others (read_config_file); nothing to store.
      {"COMMLENS_CONFIG", "the path of a file of COMMLENS_NAME=VALUE lines",
       [](Config&, const std::string&) { return true; }, [](const Config&) { return std::string("none"); }},
      {"COMMLENS_PVARS", "default, all, none, or a comma list of pvar names (a trailing * matches a prefix)",
       [](Config& c, const std::string& v) { return store(parse_pvars(v), c.pvars); },
       [](const Config&) { return std::string("default"); }},
      {"COMMLENS_PVAR_PERIOD_MS", "an integer from 1 to 60000",
       [](Config& c, const std::string& v) { return store_in_range(v, 1, 60000, c.pvar_period_ms); },
       [](const Config& c) { return std::to_string(c.pvar_period_ms); }},
      {"COMMLENS_PVAR_CALLS", "a comma list of MPI function names (MPI_Barrier,MPI_Wait,...)",
       [](Config& c, const std::string& v) {
         auto names = parse_name_list(v, false);
         const bool all_mpi = names && std::all_of(names->begin(), names->end(), [](const std::string& name) {
                                return name.starts_with("MPI_");
                              });
         return all_mpi && store(std::move(names), c.pvar_calls);
       },
       [](const Config&) { return std::string("none"); }},
      {"COMMLENS_RUNTIME", "off, on, ab",
       [](Config& c, const std::string& v) { return store(parse_runtime_mode(v), c.runtime); },
       [](const Config& c) { return std::string(runtime_mode_name(c.runtime)); }},
      {"COMMLENS_RUNTIME_COLLECTIVES", fmt::format("a comma list of {}", kRuntimeCollectives),
       [](Config& c, const std::string& v) {
         auto names = parse_name_list(v, false);
         const bool all_known =
             names && std::all_of(names->begin(), names->end(), [](const std::string& name) {
               return is_known(name, kRuntimeCollectives);
             });
         return all_known && store(std::move(names), c.runtime_collectives);
       },
       [](const Config&) { return std::string(kRuntimeDefaultCollectives); }},
      {"COMMLENS_RUNTIME_RANKS_PER_NODE", "0 (the real nodes) or a number of ranks",
       [](Config& c, const std::string& v) {
         return store_in_range(v, 0, 1 << 20, c.runtime_ranks_per_node);
       },
       [](const Config& c) { return std::to_string(c.runtime_ranks_per_node); }},
      {"COMMLENS_RUNTIME_HOST_PERCENT", "an integer from 0 to 50",
       [](Config& c, const std::string& v) {
         std::uint32_t percent = 0;
         const bool accepted = store_in_range(v, 0, 50, percent);
         if (accepted) {
           c.runtime_host_percent = percent;
         }
         return accepted;
       },
       [](const Config&) { return std::string("the tuning table's share"); }},
      {"COMMLENS_RUNTIME_ALGORITHM", kRuntimeAlgorithms,
       [](Config& c, const std::string& v) {
         const bool known = is_known(v, kRuntimeAlgorithms);
         if (known) {
           c.runtime_algorithm = v;
         }
         return known;
       },
       [](const Config& c) { return c.runtime_algorithm; }},
      // The runtime reads the file (and says what is wrong with it) when it starts.
      {"COMMLENS_RUNTIME_TUNING", "the path of a tuning table (JSON)",
       [](Config& c, const std::string& v) { return store_path(v, c.runtime_tuning_file); },
       [](const Config&) { return std::string("the shipped table"); }},
      {"COMMLENS_RUNTIME_BACKGROUND_OPENS", std::string(kBoolValues),
       [](Config& c, const std::string& v) { return store(parse_bool(v), c.runtime_background_opens); },
       [](const Config& c) { return bool_text(c.runtime_background_opens); }},
      {"COMMLENS_RUNTIME_PATHS", "off, or the path of the node's copy-path file",
       [](Config& c, const std::string& v) { return store_path(v, c.runtime_paths); },
       [](const Config&) { return std::string("the file in the cache directory"); }},
      {"COMMLENS_RUNTIME_TREE_PROGRESS", "event, blocking",
       [](Config& c, const std::string& v) {
         const bool known = is_known(v, "event,blocking");
         if (known) {
           c.runtime_tree_progress = v;
         }
         return known;
       },
       [](const Config& c) { return c.runtime_tree_progress; }},
      {"COMMLENS_RUNTIME_TREE_STREAMS", "an integer from 1 to 8",
       [](Config& c, const std::string& v) {
         std::uint32_t streams = 0;
         const bool accepted = store_in_range(v, 1, 8, streams);
         if (accepted) {
           c.runtime_tree_streams = streams;
         }
         return accepted;
       },
       [](const Config&) { return std::string("the tuning table's streams"); }},
      {"COMMLENS_RUNTIME_RESIDENT_BYTES", "bytes from 0 (off) to 67108864",
       [](Config& c, const std::string& v) {
         return store_in_range(v, 0, 1u << 26, c.runtime_resident_bytes);
       },
       [](const Config& c) { return std::to_string(c.runtime_resident_bytes); }},
      {"COMMLENS_RUNTIME_RESIDENT_LINGER_US", "microseconds from 1 to 1000000",
       [](Config& c, const std::string& v) {
         return store_in_range(v, 1, 1000000, c.runtime_resident_linger_us);
       },
       [](const Config& c) { return std::to_string(c.runtime_resident_linger_us); }},
      {"COMMLENS_RUNTIME_SELECT", "static, dynamic, sweep",
       [](Config& c, const std::string& v) {
         const bool known = is_known(v, "static,dynamic,sweep");
         if (known) {
           c.runtime_select = v;
         }
         return known;
       },
       [](const Config& c) { return c.runtime_select; }},
      {"COMMLENS_NOISE", "HZ:MAX_MS[:RANKS] (e.g. 10:10 or 10:10:0-1)",
       [](Config& c, const std::string& v) {
         c.noise = v;
         return !v.empty();
       },
       [](const Config&) { return std::string("none"); }},
  };
  return table;
}

const Setting* find_setting(std::string_view key) {
  const auto& table = settings();
  const auto found =
      std::find_if(table.begin(), table.end(), [&](const Setting& setting) { return setting.key == key; });
  return found == table.end() ? nullptr : &*found;
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

const char* kernel_recording_name(KernelRecording recording) noexcept {
  switch (recording) {
  case KernelRecording::Steps:
    return "steps";
  case KernelRecording::All:
    return "all";
  case KernelRecording::Off:
    break;
  }
  return "off";
}

std::optional<std::vector<StepSpan>> parse_step_spans(std::string_view text) {
  std::vector<StepSpan> spans;
  for (const std::string& item : split_names(text)) {
    const auto dash = item.find('-');
    const auto first = parse_in_range(std::string_view(item).substr(0, dash), 1, UINT32_MAX);
    const auto last = dash == std::string::npos
                          ? first
                          : parse_in_range(std::string_view(item).substr(dash + 1), 1, UINT32_MAX);
    if (!first || !last || *last < *first || (!spans.empty() && *first <= spans.back().last)) {
      return std::nullopt;
    }
    spans.push_back({static_cast<std::uint32_t>(*first), static_cast<std::uint32_t>(*last)});
  }
  if (spans.empty()) {
    return std::nullopt;
  }
  return spans;
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
    for (const Setting& setting : settings()) {
      const char* key = setting.key.c_str();
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

  for (const auto& [key, value] : values) {
    const Setting* setting = find_setting(key);
    if (setting == nullptr) {
      continue; // an unknown COMMLENS_* variable is kept in `raw` only
    }
    if (!setting->apply(config, value)) {
      warn(fmt::format("commlens: {}={} is not valid (accepted: {}); using {}", key, value, setting->accepted,
                       setting->fallback(config)));
    }
  }
  return config;
}

std::vector<SettingDescription> setting_descriptions() {
  const Config defaults;
  std::vector<SettingDescription> descriptions;
  for (const Setting& setting : settings()) {
    descriptions.push_back({setting.key, setting.accepted, setting.fallback(defaults)});
  }
  return descriptions;
}

} // namespace commlens
