#pragma once
// The copy paths of the GPUs a communicator's ranks run on, known once per node: read from the
// node's path file (topology/path_cache.hpp) or, for a GPU not in it, measured and added. Each
// GPU's leading rank measures in its turn while the others wait, so no two measurements share
// the host's memory or a peer's link: host to GPU and back through pinned memory, and a copy into
// every other GPU's probe buffer through CUDA IPC (NVLink or PCIe), best of three 64 MiB copies.
#include "engine/communicator_engine.hpp"
#include "path_cache.hpp"

#include <optional>

namespace commlens::runtime {

struct KnownPaths {
  topology::GpuPaths paths;
  bool measured = false; // false: read from the file
  std::string file;
};

// Collective over the single-node communicator `comm`. The paths of this rank's GPU when this rank
// leads it and this process did not know them before; nothing otherwise. `setting` is
// COMMLENS_RUNTIME_PATHS: the node's file, or empty for the default one (not "off": the caller
// skips the probe then). Problems (a file that cannot be read or written, a copy that failed) go
// to *problem; a failed measurement is not stored.
std::optional<KnownPaths> probe_paths(MPI_Comm comm, const CommunicatorEngine& engine,
                                      const std::string& setting, std::string* problem);

} // namespace commlens::runtime
