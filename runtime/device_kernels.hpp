#pragma once
// The runtime's GPU work, callable from host C++ (no CUDA types cross this header).
#include "reduction_types.hpp"

#include <cstddef>

namespace commlens::runtime {

inline constexpr int kMaxRanks = 8; // ranks of one node communicator the kernels take

struct SourceList {
  const void* pointers[kMaxRanks];
  int count;
};

// out[i] = op over sources in source order (the same order on every rank, so floating-point
// results are bitwise equal everywhere) of source[i], for i < elements. Sources may be other
// processes' memory mapped through CUDA IPC: the loads then cross NVLink or PCIe.
// Returns a CUDA error code (0 = launched).
int launch_reduce(Reduction reduction, const SourceList& sources, void* out, std::size_t elements,
                  void* stream) noexcept;

// Several copies in one launch, SM-driven (loads from peer memory, stores to local memory).
struct CopySegment {
  const void* source;
  void* destination;
  std::size_t bytes;
};
int launch_copies(const CopySegment* segments, int count, void* stream) noexcept;

} // namespace commlens::runtime
