#pragma once
// Which path a copy took (cuda_copies.path). Precedence, first match wins:
//   managed      a unified-memory migration (CUPTI's unified-memory counters)
//   ipc          one side is memory mapped from another process's IPC handle
//   host_staged  device<->host (pinned or pageable): the staging half of an MPI transfer
//   peer         source and destination devices differ (NVLink or PCIe from the topology)
//   same_device  device to device on one GPU
//   host_to_host
//   other        arrays and anything CUPTI could not say
// Pure logic over commlens records, so it is unit-tested without a GPU.
#include "cuda_records.hpp"

#include <functional>

namespace commlens::cuda {

struct CopyClassification {
  CopyPath path;
  PeerLink link; // PeerLink::None unless the copy crosses two devices
};

class CopyPathClassifier {
public:
  using LinkBetween = std::function<PeerLink(std::uint32_t, std::uint32_t)>;
  explicit CopyPathClassifier(LinkBetween link_between) : link_between_(std::move(link_between)) {}

  CopyClassification classify(const CudaCopy& copy) const;

private:
  LinkBetween link_between_;
};

} // namespace commlens::cuda
