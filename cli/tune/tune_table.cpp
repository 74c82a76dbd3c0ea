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

Measurement describe_measurement(const std::string& id, const std::string& gpu, int ranks, int gpus, bool mps,
                                 const std::string& command) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return {id, gpu, host, ranks, gpus, mps, fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now), command};
}

std::string default_output(const std::string& gpu_name) {
  static const std::regex kModel(R"(\b([A-Za-z]+[0-9]+)\b)"); // H100 in "NVIDIA H100 80GB HBM3"
  std::smatch model;
  std::string name = std::regex_search(gpu_name, model, kModel) ? model[1].str() : std::string("gpu");
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
  return merge_measured(std::move(measured), parse_table(text.str()), shape);
}

} // namespace commlens::cli
