#include "cuda_records.hpp"

namespace commlens::cuda {

const char* memory_kind_name(MemoryKind kind) noexcept {
  static constexpr const char* kNames[] = {"unknown", "pageable", "pinned", "device", "array", "managed"};
  return kNames[static_cast<int>(kind)];
}

const char* copy_direction_name(CopyDirection direction) noexcept {
  static constexpr const char* kNames[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA",   "AtoD",
                                           "DtoA", "DtoD", "HtoH", "PtoP", "unknown"};
  return kNames[static_cast<int>(direction)];
}

const char* copy_path_name(CopyPath path) noexcept {
  static constexpr const char* kNames[] = {"host_staged", "peer",         "ipc",  "same_device",
                                           "managed",     "host_to_host", "other"};
  return kNames[static_cast<int>(path)];
}

const char* peer_link_name(PeerLink link) noexcept {
  switch (link) {
  case PeerLink::NvLink:
    return "nvlink";
  case PeerLink::Pcie:
    return "pcie";
  default:
    return nullptr;
  }
}

const char* sync_kind_name(SyncKind kind) noexcept {
  static constexpr const char* kNames[] = {"unknown", "event_synchronize", "stream_wait_event",
                                           "stream_synchronize", "context_synchronize"};
  return kNames[static_cast<int>(kind)];
}

} // namespace commlens::cuda
