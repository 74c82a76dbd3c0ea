#include "engine/path_probe.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <set>

namespace commlens::runtime {

namespace {

constexpr std::size_t kProbeBytes = std::size_t{64} << 20;
constexpr int kTimedCopies = 3;

// What each rank tells the others: whether it leads its GPU, which GPU, and the IPC handle of the
// probe buffer it holds there (leaders only).
struct ProbeTarget {
  int leads = 0;
  char pci[16] = {};
  cudaIpcMemHandle_t handle{};
};

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The GPUs whose paths this process knows already (one probe per GPU and process).
std::set<std::string>& known_gpus() {
  static std::set<std::string> known;
  return known;
}

// Best of kTimedCopies after one warm-up, in GB/s; 0 when a copy failed.
double best_gbps(cudaStream_t stream, const std::function<cudaError_t()>& copy) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    return 0;
  }
  float best_ms = 0;
  bool failed = copy() != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess;
  for (int i = 0; i < kTimedCopies && !failed; ++i) {
    float ms = 0;
    failed = cudaEventRecord(start, stream) != cudaSuccess || copy() != cudaSuccess ||
             cudaEventRecord(stop, stream) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
             cudaEventElapsedTime(&ms, start, stop) != cudaSuccess;
    best_ms = i == 0 ? ms : std::min(best_ms, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGetLastError();
  return failed || best_ms <= 0 ? 0 : static_cast<double>(kProbeBytes) / (best_ms * 1e6);
}

// This rank's turn: host paths, then a copy into every other GPU's probe buffer.
bool measure(topology::GpuPaths& paths, int device, void* mine, const std::vector<ProbeTarget>& targets) {
  cudaStream_t stream = nullptr;
  void* pinned = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  bool ok = cudaMallocHost(&pinned, kProbeBytes) == cudaSuccess;
  if (ok) {
    paths.host_to_device_gbps = best_gbps(
        stream, [&] { return cudaMemcpyAsync(mine, pinned, kProbeBytes, cudaMemcpyHostToDevice, stream); });
    paths.device_to_host_gbps = best_gbps(
        stream, [&] { return cudaMemcpyAsync(pinned, mine, kProbeBytes, cudaMemcpyDeviceToHost, stream); });
    ok = paths.host_to_device_gbps > 0 && paths.device_to_host_gbps > 0;
    cudaFreeHost(pinned);
  }
  for (const ProbeTarget& target : targets) {
    if (!ok || target.leads == 0 || paths.pci == target.pci) {
      continue;
    }
    topology::PeerPath peer{.pci = target.pci};
    if (int ordinal = -1; cudaDeviceGetByPCIBusId(&ordinal, target.pci) == cudaSuccess) {
      cudaDeviceGetP2PAttribute(&peer.performance_rank, cudaDevP2PAttrPerformanceRank, device, ordinal);
    }
    void* theirs = nullptr;
    ok = cudaIpcOpenMemHandle(&theirs, target.handle, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess;
    if (ok) {
      peer.gbps = best_gbps(stream, [&] {
        return cudaMemcpyAsync(theirs, mine, kProbeBytes, cudaMemcpyDeviceToDevice, stream);
      });
      ok = peer.gbps > 0;
      cudaIpcCloseMemHandle(theirs);
    }
    paths.peers.push_back(peer);
  }
  cudaStreamDestroy(stream);
  cudaGetLastError();
  return ok;
}

} // namespace

std::optional<KnownPaths> probe_paths(MPI_Comm comm, const CommunicatorEngine& engine,
                                      const std::string& setting, std::string* problem) {
  int device = 0;
  cudaDeviceProp properties{};
  ProbeTarget me;
  topology::GpuPaths paths;
  const bool leads = engine.leads_my_gpu() && cudaGetDevice(&device) == cudaSuccess &&
                     cudaGetDeviceProperties(&properties, device) == cudaSuccess &&
                     cudaDeviceGetPCIBusId(me.pci, sizeof me.pci, device) == cudaSuccess &&
                     cudaDriverGetVersion(&paths.driver) == cudaSuccess;
  paths.pci = me.pci;
  paths.name = properties.name;
  const std::filesystem::path file =
      setting.empty() ? topology::default_cache_file(host_name()) : std::filesystem::path(setting);
  std::optional<KnownPaths> known;
  int need = 0;
  if (leads && !known_gpus().contains(paths.pci)) {
    if (auto cached = topology::read_cached(file, paths.pci, paths.name, paths.driver, problem)) {
      known = KnownPaths{std::move(*cached), false, file.string()};
      known_gpus().insert(paths.pci);
    } else {
      need = 1;
    }
  }
  int anyone_needs = 0;
  PMPI_Allreduce(&need, &anyone_needs, 1, MPI_INT, MPI_MAX, comm);
  if (anyone_needs == 0) {
    return known;
  }
  // Every leader holds a probe buffer for the others to copy into.
  void* mine = nullptr;
  if (leads && cudaMalloc(&mine, kProbeBytes) == cudaSuccess &&
      cudaIpcGetMemHandle(&me.handle, mine) == cudaSuccess) {
    me.leads = 1;
  }
  cudaGetLastError();
  std::vector<ProbeTarget> targets(static_cast<std::size_t>(engine.size()));
  PMPI_Allgather(&me, sizeof me, MPI_BYTE, targets.data(), sizeof me, MPI_BYTE, comm);
  bool measured = false;
  for (int turn = 0; turn < engine.size(); ++turn) {
    if (turn == engine.rank() && need != 0 && me.leads != 0) {
      measured = measure(paths, device, mine, targets);
    }
    PMPI_Barrier(comm); // the next rank measures on idle paths
  }
  if (mine != nullptr) {
    cudaFree(mine);
  }
  if (need == 0) {
    return known;
  }
  known_gpus().insert(paths.pci); // measured or failed: not again in this process
  if (!measured) {
    *problem = "measuring the copy paths of GPU " + paths.pci + " failed";
    return std::nullopt;
  }
  topology::store(file, paths, problem);
  return KnownPaths{std::move(paths), true, file.string()};
}

} // namespace commlens::runtime
