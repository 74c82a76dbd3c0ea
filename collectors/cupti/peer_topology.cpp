#include "peer_topology.hpp"

#include <cuda.h>
#include <dlfcn.h>

namespace commlens::cuda {

namespace {

// The four NVML entry points used, declared here: nvml.h is not part of every CUDA toolkit.
using NvmlDevice = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlP2pCapsIndexNvlink = 2; // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2pStatusOk = 0;        // NVML_P2P_STATUS_OK

struct Nvml {
  int (*init)() = nullptr;
  int (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;

  static Nvml load() {
    Nvml nvml;
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      return nvml;
    }
    nvml.init = reinterpret_cast<int (*)()>(dlsym(library, "nvmlInit_v2"));
    nvml.handle_by_pci_bus_id = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(
        dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    nvml.p2p_status = reinterpret_cast<int (*)(NvmlDevice, NvmlDevice, int, int*)>(
        dlsym(library, "nvmlDeviceGetP2PStatus"));
    if (nvml.init == nullptr || nvml.handle_by_pci_bus_id == nullptr || nvml.p2p_status == nullptr ||
        nvml.init() != kNvmlSuccess) {
      nvml.p2p_status = nullptr;
    }
    return nvml;
  }
  bool usable() const { return p2p_status != nullptr; }
};

NvmlDevice nvml_device(const Nvml& nvml, int ordinal) {
  CUdevice device = 0;
  char bus_id[32] = {};
  NvmlDevice handle = nullptr;
  if (cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
      cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != CUDA_SUCCESS ||
      nvml.handle_by_pci_bus_id(bus_id, &handle) != kNvmlSuccess) {
    return nullptr;
  }
  return handle;
}

} // namespace

PeerTopology PeerTopology::measure() {
  PeerTopology topology;
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) {
    return topology;
  }
  topology.devices_ = static_cast<std::uint32_t>(count);
  topology.nvlink_.assign(topology.devices_ * topology.devices_, false);
  const Nvml nvml = Nvml::load();
  topology.nvml_available_ = nvml.usable();
  if (!topology.nvml_available_) {
    return topology;
  }
  std::vector<NvmlDevice> handles;
  for (int i = 0; i < count; ++i) {
    handles.push_back(nvml_device(nvml, i));
  }
  for (std::uint32_t a = 0; a < topology.devices_; ++a) {
    for (std::uint32_t b = 0; b < topology.devices_; ++b) {
      int status = -1;
      topology.nvlink_[a * topology.devices_ + b] =
          a != b && handles[a] != nullptr && handles[b] != nullptr &&
          nvml.p2p_status(handles[a], handles[b], kNvmlP2pCapsIndexNvlink, &status) == kNvmlSuccess &&
          status == kNvmlP2pStatusOk;
    }
  }
  return topology;
}

PeerLink PeerTopology::link_between(std::uint32_t a, std::uint32_t b) const noexcept {
  if (a == b) {
    return PeerLink::None;
  }
  if (a >= devices_ || b >= devices_) {
    return PeerLink::Pcie;
  }
  return nvlink_[a * devices_ + b] ? PeerLink::NvLink : PeerLink::Pcie;
}

} // namespace commlens::cuda
