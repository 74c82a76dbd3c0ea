#include "commlens/profiler/config.hpp"
#include "commlens/profiler/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <span>
#include <string_view>

extern char** environ;

namespace commlens {

// The machinery of a settings table (common/settings/setting_rules.hpp).
using namespace settings;

namespace {

constexpr std::string_view kPrefix = "COMMLENS_";

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

using Setting = SettingRule<Config>;

// Every setting the profiler reads, in the order of docs/user-guide.md's table (a test keeps the
// two in step; the runtime's rows are contract/runtime_settings.cpp's).
const std::vector<Setting>& config_rules() {
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
         constexpr KernelRecording kRecordings[] = {KernelRecording::Off, KernelRecording::Steps,
                                                    KernelRecording::All};
         return store(parse_named(v, kRecordings, kernel_recording_name), c.kernels);
       },
       [](const Config& c) { return std::string(kernel_recording_name(c.kernels)); }},
      {"COMMLENS_KERNEL_STEPS", "step numbers and spans from 1, in order (6-8 or 6-8,100-102)",
       [](Config& c, const std::string& v) { return store(parse_step_spans(v), c.kernel_steps); },
       [](const Config& c) { return step_spans_text(c.kernel_steps); }},
      {"COMMLENS_CUDA_COPIES", "auto, cupti, calls",
       [](Config& c, const std::string& v) {
         constexpr CopySource kSources[] = {CopySource::Auto, CopySource::Cupti, CopySource::Calls};
         return store(parse_named(v, kSources, copy_source_name), c.cuda_copies);
       },
       [](const Config& c) { return std::string(copy_source_name(c.cuda_copies)); }},
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
      {"COMMLENS_NOISE", "HZ:MAX_MS[:RANKS] (e.g. 10:10 or 10:10:0-1)",
       [](Config& c, const std::string& v) {
         c.noise = v;
         return !v.empty();
       },
       [](const Config&) { return std::string("none"); }},
  };
  return table;
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

const char* copy_source_name(CopySource source) noexcept {
  switch (source) {
  case CopySource::Cupti:
    return "cupti";
  case CopySource::Calls:
    return "calls";
  case CopySource::Auto:
    break;
  }
  return "auto";
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

Config Config::from_environment(const Warn& warn, const Lookup& lookup) {
  Config config;
  std::map<std::string, std::string>& values = config.raw;
  if (lookup) {
    for (const Setting& setting : config_rules()) {
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

  // A COMMLENS_* variable of no row here (the runtime's, an unknown one) is kept in `raw` only.
  apply_rules(std::span(config_rules()), values, config, warn);
  return config;
}

std::vector<SettingDescription> setting_descriptions() {
  return describe_rules(std::span(config_rules()));
}

} // namespace commlens
