#include "runtime_settings.hpp"

#include "runtime_collective_names.hpp"

#include <algorithm>
#include <span>

namespace commlens {

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

std::optional<RuntimeMode> parse_runtime_mode(std::string_view text) {
  constexpr RuntimeMode kModes[] = {RuntimeMode::Off, RuntimeMode::On, RuntimeMode::AB};
  return settings::parse_named(text, kModes, runtime_mode_name);
}

} // namespace commlens

namespace commlens::contract {

// The machinery of a settings table (common/settings/setting_rules.hpp).
using namespace settings;

namespace {

using Setting = SettingRule<RuntimeSettings>;

std::string joined_names() {
  std::string list;
  const auto add = [&](std::string_view name) { list += (list.empty() ? "" : ",") + std::string(name); };
  std::ranges::for_each(kBlockingRuntimeCollectives, add);
  add(kPointToPointName);
  std::ranges::for_each(kNonblockingRuntimeCollectives, add);
  return list;
}

const std::vector<Setting>& runtime_rules() {
  static const std::vector<Setting> table = {
      {"COMMLENS_RUNTIME", "off, on, ab",
       [](RuntimeSettings& r, const std::string& v) { return store(parse_runtime_mode(v), r.mode); },
       [](const RuntimeSettings& r) { return std::string(runtime_mode_name(r.mode)); }},
      {"COMMLENS_RUNTIME_COLLECTIVES", "a comma list of " + runtime_collective_list(),
       [](RuntimeSettings& r, const std::string& v) {
         auto names = parse_name_list(v, false);
         const bool all_known =
             names && std::all_of(names->begin(), names->end(), [](const std::string& name) {
               return is_known(name, runtime_collective_list());
             });
         return all_known && store(std::move(names), r.collectives);
       },
       [](const RuntimeSettings&) { return std::string(kRuntimeDefaultCollectives); }},
      {"COMMLENS_RUNTIME_RANKS_PER_NODE", "0 (the real nodes) or a number of ranks",
       [](RuntimeSettings& r, const std::string& v) {
         return store_in_range(v, 0, 1 << 20, r.ranks_per_node);
       },
       [](const RuntimeSettings& r) { return std::to_string(r.ranks_per_node); }},
      {"COMMLENS_RUNTIME_HOST_PERCENT", "an integer from 0 to 50",
       [](RuntimeSettings& r, const std::string& v) { return store_in_range(v, 0, 50, r.host_percent); },
       [](const RuntimeSettings&) { return std::string("the tuning table's share"); }},
      {"COMMLENS_RUNTIME_ALGORITHM", kRuntimeAlgorithms,
       [](RuntimeSettings& r, const std::string& v) {
         return store_known(v, kRuntimeAlgorithms, r.algorithm);
       },
       [](const RuntimeSettings& r) { return r.algorithm; }},
      {"COMMLENS_RUNTIME_TUNING", "the path of a tuning table (JSON)",
       [](RuntimeSettings& r, const std::string& v) { return store_path(v, r.tuning_file); },
       [](const RuntimeSettings&) { return std::string("the shipped table"); }},
      {"COMMLENS_RUNTIME_BACKGROUND_OPENS", std::string(kBoolValues),
       [](RuntimeSettings& r, const std::string& v) { return store(parse_bool(v), r.background_opens); },
       [](const RuntimeSettings& r) { return bool_text(r.background_opens); }},
      {"COMMLENS_RUNTIME_PATHS", "off, or the path of the node's copy-path file",
       [](RuntimeSettings& r, const std::string& v) { return store_path(v, r.paths); },
       [](const RuntimeSettings&) { return std::string("the file in the cache directory"); }},
      {"COMMLENS_RUNTIME_TREE_PROGRESS", "event, blocking",
       [](RuntimeSettings& r, const std::string& v) {
         return store_known(v, "event,blocking", r.tree_progress);
       },
       [](const RuntimeSettings& r) { return r.tree_progress; }},
      {"COMMLENS_RUNTIME_TREE_STREAMS", "an integer from 1 to 8",
       [](RuntimeSettings& r, const std::string& v) { return store_in_range(v, 1, 8, r.tree_streams); },
       [](const RuntimeSettings&) { return std::string("the tuning table's streams"); }},
      {"COMMLENS_RUNTIME_RESIDENT_BYTES", "bytes from 0 (off) to 67108864",
       [](RuntimeSettings& r, const std::string& v) {
         return store_in_range(v, 0, 1u << 26, r.resident_bytes);
       },
       [](const RuntimeSettings& r) { return std::to_string(r.resident_bytes); }},
      {"COMMLENS_RUNTIME_RESIDENT_LINGER_US", "microseconds from 1 to 1000000",
       [](RuntimeSettings& r, const std::string& v) {
         return store_in_range(v, 1, 1000000, r.resident_linger_us);
       },
       [](const RuntimeSettings& r) { return std::to_string(r.resident_linger_us); }},
      {"COMMLENS_RUNTIME_SELECT", "static, dynamic, sweep",
       [](RuntimeSettings& r, const std::string& v) {
         return store_known(v, "static,dynamic,sweep", r.select);
       },
       [](const RuntimeSettings& r) { return r.select; }},
  };
  return table;
}

} // namespace

const std::string& runtime_collective_list() {
  static const std::string list = joined_names();
  return list;
}

RuntimeSettings read_runtime_settings(const std::map<std::string, std::string>& values, const Warn& warn) {
  RuntimeSettings runtime;
  apply_rules(std::span(runtime_rules()), values, runtime, warn);
  return runtime;
}

std::vector<SettingDescription> runtime_setting_descriptions() {
  return describe_rules(std::span(runtime_rules()));
}

} // namespace commlens::contract
