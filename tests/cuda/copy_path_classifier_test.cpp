// The copy-path rules of collectors/cupti/copy_path_classifier.hpp, without a GPU.
#include "copy_path_classifier.hpp"

#include <gtest/gtest.h>

namespace commlens::cuda {
namespace {

CopyPathClassifier classifier() {
  return CopyPathClassifier(
      [](std::uint32_t a, std::uint32_t b) { return a + b == 1 ? PeerLink::NvLink : PeerLink::Pcie; });
}

CudaCopy copy(CopyDirection direction, MemoryKind src, MemoryKind dst, std::uint32_t src_device = 0,
              std::uint32_t dst_device = 0) {
  CudaCopy c;
  c.direction = direction;
  c.src_kind = src;
  c.dst_kind = dst;
  c.src_device = src_device;
  c.dst_device = dst_device;
  return c;
}

TEST(CopyPathClassifier, DeviceToHostAndBackArePinnedOrPageableHostStaging) {
  EXPECT_EQ(classifier().classify(copy(CopyDirection::DtoH, MemoryKind::Device, MemoryKind::Pinned)).path,
            CopyPath::HostStaged);
  EXPECT_EQ(classifier().classify(copy(CopyDirection::HtoD, MemoryKind::Pageable, MemoryKind::Device)).path,
            CopyPath::HostStaged);
}

TEST(CopyPathClassifier, CopiesBetweenTwoDevicesArePeerWithTheTopologysLink) {
  const auto nvlink =
      classifier().classify(copy(CopyDirection::PtoP, MemoryKind::Device, MemoryKind::Device, 0, 1));
  EXPECT_EQ(nvlink.path, CopyPath::Peer);
  EXPECT_EQ(nvlink.link, PeerLink::NvLink);
  EXPECT_EQ(
      classifier().classify(copy(CopyDirection::PtoP, MemoryKind::Device, MemoryKind::Device, 0, 2)).link,
      PeerLink::Pcie);
}

TEST(CopyPathClassifier, IpcMappingWinsOverPeerAndSameDevice) {
  CudaCopy c = copy(CopyDirection::DtoD, MemoryKind::Device, MemoryKind::Device);
  c.touches_ipc_mapping = true;
  EXPECT_EQ(classifier().classify(c).path, CopyPath::Ipc);
  c.dst_device = 1;
  EXPECT_EQ(classifier().classify(c).link, PeerLink::NvLink);
}

TEST(CopyPathClassifier, DeviceToDeviceOnOneGpuIsSameDevice) {
  EXPECT_EQ(classifier().classify(copy(CopyDirection::DtoD, MemoryKind::Device, MemoryKind::Device)).path,
            CopyPath::SameDevice);
}

TEST(CopyPathClassifier, UnifiedMemoryMigrationsAreManaged) {
  CudaCopy c = copy(CopyDirection::HtoD, MemoryKind::Managed, MemoryKind::Device);
  c.managed_migration = true;
  EXPECT_EQ(classifier().classify(c).path, CopyPath::Managed);
}

TEST(CopyPathClassifier, HostToHostAndArraysAreNamedAsSuch) {
  EXPECT_EQ(classifier().classify(copy(CopyDirection::HtoH, MemoryKind::Pinned, MemoryKind::Pageable)).path,
            CopyPath::HostToHost);
  EXPECT_EQ(classifier().classify(copy(CopyDirection::AtoA, MemoryKind::Array, MemoryKind::Array)).path,
            CopyPath::Other);
}

} // namespace
} // namespace commlens::cuda
