#pragma once
// NVLink or PCIe between two GPUs of this node, measured once at start-up: NVML's P2P status for
// the NVLink capability (NVML is dlopen()ed: it is optional), PCIe otherwise.
#include "cuda_records.hpp"

#include <cstdint>
#include <vector>

namespace commlens::cuda {

class PeerTopology {
public:
  // Queries every device pair; devices the driver cannot describe count as PCIe.
  static PeerTopology measure();

  PeerLink link_between(std::uint32_t a, std::uint32_t b) const noexcept;
  bool nvml_available() const noexcept { return nvml_available_; }

private:
  std::uint32_t devices_ = 0;
  std::vector<bool> nvlink_; // devices_ x devices_
  bool nvml_available_ = false;
};

} // namespace commlens::cuda
