#pragma once
// Where a GPU sits on the host: the NUMA node and the CPUs its PCI slot is local to (from sysfs),
// and whether a process's CPUs are among them. Host staging through the memory of the other socket
// crosses the link between sockets, so a rank placed away from its GPU pays on every staged copy
// (Ji et al., "DMA-assisted, intranode communication in GPU accelerated systems", on when host staging wins).
// Pure C++: tested on machines without a GPU.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::runtime::topology {

struct NumaPlacement {
  int node = -1;               // -1: the machine reports no NUMA node for the slot
  std::vector<int> local_cpus; // empty: not reported
};

// The placement of the PCI device `pci_bus_id` ("0000:1b:00.0"; CUDA's upper-case and 8-digit
// domain forms too), read under `sysfs`; nullopt when sysfs has no such device.
std::optional<NumaPlacement> numa_placement(std::string_view pci_bus_id,
                                            const std::filesystem::path& sysfs = "/sys");

// "0-3,8,10-11" <-> {0, 1, 2, 3, 8, 10, 11}; anything unreadable gives an empty list.
std::vector<int> parse_cpu_list(std::string_view list);
std::string format_cpu_list(const std::vector<int>& cpus);

// The CPUs this process may run on (sched_getaffinity); empty when unknown.
std::vector<int> process_cpus();

// "NUMA node 1, local CPUs 16-31; this rank's CPUs 0-15: remote (host staging crosses sockets)".
std::string describe_placement(const std::optional<NumaPlacement>& placement, const std::vector<int>& cpus);

} // namespace commlens::runtime::topology
