#include "tune/tune_table.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace commlens::cli {

namespace fs = std::filesystem;
using namespace runtime::tuning;

namespace {

template <typename RuleType> bool same_shape(const RuleType& rule, const MeasuredShape& shape) {
  return rule.gpus == shape.gpus && rule.ranks_share_gpu == shape.ranks_share_gpu;
}

// The file's rules of other shapes, after `kept`'s.
template <typename RuleType>
void keep_other_shapes(std::vector<RuleType>& kept, const std::vector<RuleType>& file,
                       const MeasuredShape& shape) {
  std::ranges::copy_if(file, std::back_inserter(kept),
                       [&](const RuleType& rule) { return !same_shape(rule, shape); });
}

template <typename RuleType>
void collect_names(const std::vector<RuleType>& rules, std::vector<std::string>& names) {
  for (const RuleType& rule : rules)
    if (rule.measured)
      names.push_back(rule.measured->measurement);
}

} // namespace

Measurement describe_measurement(const std::string& id, const std::string& gpu, int ranks, int gpus,
                                 const std::string& command) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const char* pipes = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const fs::path control =
      fs::path(pipes != nullptr && *pipes != '\0' ? pipes : "/tmp/nvidia-mps") / "control";
  std::error_code error;
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return {
      id,     gpu, host, ranks, gpus, fs::exists(control, error), fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now),
      command};
}

std::string default_output(const std::string& gpu_name) {
  static const std::regex kModel(R"(\b([A-Za-z]+[0-9]+)\b)");
  std::smatch model;
  std::string name = "gpu";
  for (auto it = std::sregex_iterator(gpu_name.begin(), gpu_name.end(), kModel); it != std::sregex_iterator();
       ++it) {
    if ((*it)[1] != "NVIDIA") {
      name = (*it)[1];
      break;
    }
  }
  std::ranges::transform(name, name.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const fs::path folder = "runtime/tuning";
  return fs::is_directory(folder) ? (folder / (name + ".json")).string() : name + ".json";
}

Table merge_with_file(Table measured, const std::string& path, const MeasuredShape& shape) {
  std::ifstream input(path);
  if (!input)
    return measured;
  std::stringstream text;
  text << input.rdbuf();
  const Table file = parse_table(text.str());
  keep_other_shapes(measured.rules, file.rules, shape);
  keep_other_shapes(measured.data_movement, file.data_movement, shape);
  keep_other_shapes(measured.trees, file.trees, shape);
  if (!measured.point_to_point.measured)
    measured.point_to_point = file.point_to_point;
  std::vector<std::string> named;
  collect_names(measured.rules, named);
  collect_names(measured.data_movement, named);
  collect_names(measured.trees, named);
  if (measured.point_to_point.measured)
    named.push_back(measured.point_to_point.measured->measurement);
  for (const Measurement& earlier : file.measurements) {
    const bool listed =
        std::ranges::any_of(measured.measurements, [&](const Measurement& m) { return m.id == earlier.id; });
    if (!listed && std::ranges::find(named, earlier.id) != named.end())
      measured.measurements.push_back(earlier);
  }
  return measured;
}

} // namespace commlens::cli
