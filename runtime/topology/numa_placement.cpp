#include "numa_placement.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

namespace commlens::runtime::topology {

namespace {

// sysfs names devices "dddd:bb:dd.f" in lower case; CUDA may print the domain with 8 digits and
// the hex digits in upper case.
std::string sysfs_name(std::string_view pci_bus_id) {
  std::string name(pci_bus_id);
  std::ranges::transform(name, name.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (const auto colon = name.find(':'); colon != std::string::npos && colon > 4) {
    name.erase(0, colon - 4);
  }
  return name;
}

std::optional<std::string> read_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return std::nullopt;
  }
  return line;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() ? std::optional(value) : std::nullopt;
}

} // namespace

std::optional<NumaPlacement> numa_placement(std::string_view pci_bus_id, const std::filesystem::path& sysfs) {
  const std::filesystem::path device = sysfs / "bus" / "pci" / "devices" / sysfs_name(pci_bus_id);
  std::error_code error;
  if (!std::filesystem::is_directory(device, error)) {
    return std::nullopt;
  }
  NumaPlacement placement;
  if (const auto node = read_line(device / "numa_node")) {
    placement.node = parse_int(*node).value_or(-1);
  }
  if (const auto cpus = read_line(device / "local_cpulist")) {
    placement.local_cpus = parse_cpu_list(*cpus);
  }
  return placement;
}

std::vector<int> parse_cpu_list(std::string_view list) {
  std::vector<int> cpus;
  while (!list.empty() && std::isspace(static_cast<unsigned char>(list.back()))) {
    list.remove_suffix(1);
  }
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view range = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const auto dash = range.find('-');
    const auto first = parse_int(range.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_int(range.substr(dash + 1));
    if (!first || !last || *last < *first || *first < 0) {
      return {};
    }
    for (int cpu = *first; cpu <= *last; ++cpu) {
      cpus.push_back(cpu);
    }
  }
  std::ranges::sort(cpus);
  cpus.erase(std::ranges::unique(cpus).begin(), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    text += fmt::format("{}{}", text.empty() ? "" : ",",
                        i == j ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
    i = j + 1;
  }
  return text;
}

std::vector<int> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    return {};
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::string describe_placement(const std::optional<NumaPlacement>& placement, const std::vector<int>& cpus) {
  if (!placement || placement->local_cpus.empty()) {
    return "NUMA placement not reported";
  }
  std::string text = placement->node >= 0 ? fmt::format("NUMA node {}", placement->node) : "no NUMA node";
  text += fmt::format(", local CPUs {}", format_cpu_list(placement->local_cpus));
  if (cpus.empty()) {
    return text;
  }
  const auto local = std::ranges::count_if(
      cpus, [&](int cpu) { return std::ranges::binary_search(placement->local_cpus, cpu); });
  const char* verdict = local == static_cast<std::ptrdiff_t>(cpus.size()) ? "local"
                        : local == 0 ? "remote (host staging crosses sockets)"
                                     : "partly local";
  return text + fmt::format("; this rank's CPUs {}: {}", format_cpu_list(cpus), verdict);
}

} // namespace commlens::runtime::topology
