#pragma once
// The copy paths of a node's GPUs as measured by the runtime (runtime/engine/path_probe.cpp), kept in one
// JSON file per node so that each GPU is measured once, not in every job: host to GPU and GPU to
// host over PCIe through pinned memory, and GPU to GPU over CUDA IPC (NVLink or PCIe). An entry
// holds only for the GPU model and driver it was measured with; anything else is measured again.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace commlens::runtime::topology {

struct PeerPath {
  std::string pci;           // the peer GPU's PCI bus id, "0000:2a:00.0"
  int performance_rank = -1; // cudaDevP2PAttrPerformanceRank (0 best); -1: not visible here
  double gbps = 0;           // one copy engine, this GPU's memory into the peer's, GB/s
};

struct GpuPaths {
  std::string pci;
  std::string name; // "NVIDIA H100 80GB HBM3"
  int driver = 0;   // cudaDriverGetVersion
  double host_to_device_gbps = 0;
  double device_to_host_gbps = 0;
  std::vector<PeerPath> peers;
};

// paths-HOST.json in $XDG_CACHE_HOME/commlens or ~/.cache/commlens (the host in the name: home
// directories are often shared between nodes); COMMLENS_RUNTIME_PATHS names another.
std::filesystem::path default_cache_file(const std::string& host);

// The entry for the GPU at `pci`, if the file has one measured on the same model and driver; a
// file that cannot be read as this format gives nothing and says why in *problem.
std::optional<GpuPaths> read_cached(const std::filesystem::path& file, const std::string& pci,
                                    const std::string& name, int driver, std::string* problem);

// Adds or replaces the GPU's entry, keeping the others: under an exclusive lock on FILE.lock
// (the GPUs of a node store at about the same time), written to a temporary file then renamed, so
// a reader never sees half a file. False with *problem when the directory or file cannot be written.
bool store(const std::filesystem::path& file, const GpuPaths& paths, std::string* problem);

// One line for the run table: "host->GPU 55.1 GB/s, GPU->host 53.0 GB/s; to 0000:2a:00.0 396.2 GB/s (rank
// 0)".
std::string describe(const GpuPaths& paths);

} // namespace commlens::runtime::topology
