#include "copy_path_classifier.hpp"

namespace commlens::cuda {

namespace {

bool host_and_device(const CudaCopy& copy) {
  switch (copy.direction) {
  case CopyDirection::HtoD:
  case CopyDirection::DtoH:
    return true;
  case CopyDirection::Unknown:
    return is_host_memory(copy.src_kind) != is_host_memory(copy.dst_kind);
  default:
    return false;
  }
}

} // namespace

CopyClassification CopyPathClassifier::classify(const CudaCopy& copy) const {
  const bool crosses_devices = copy.src_device != copy.dst_device;
  const PeerLink link =
      crosses_devices && link_between_ ? link_between_(copy.src_device, copy.dst_device) : PeerLink::None;
  if (copy.managed_migration) {
    return {CopyPath::Managed, PeerLink::None};
  }
  if (copy.touches_ipc_mapping) {
    return {CopyPath::Ipc, link};
  }
  if (host_and_device(copy)) {
    return {CopyPath::HostStaged, PeerLink::None};
  }
  if (crosses_devices || copy.direction == CopyDirection::PtoP) {
    return {CopyPath::Peer, link};
  }
  if (copy.direction == CopyDirection::DtoD) {
    return {CopyPath::SameDevice, PeerLink::None};
  }
  if (copy.direction == CopyDirection::HtoH) {
    return {CopyPath::HostToHost, PeerLink::None};
  }
  return {CopyPath::Other, PeerLink::None};
}

} // namespace commlens::cuda
