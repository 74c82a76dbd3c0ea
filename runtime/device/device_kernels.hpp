#pragma once
// The runtime's GPU work, callable from host C++ (no CUDA types cross this header).
#include "device/reduction_types.hpp"

#include <cstddef>

namespace commlens::runtime {

inline constexpr int kMaxRanks = 8; // ranks of one node communicator the kernels take

struct SourceList {
  const void* pointers[kMaxRanks];
  int count;
};

// Where a reduction's result goes: one output, or (ranks sharing a GPU) the outputs of every rank
// on it, written by one kernel.
struct DestinationList {
  void* pointers[kMaxRanks];
  int count;
};

// out[i] = op over sources in source order (the same order on every rank, so floating-point
// results are bitwise equal everywhere) of source[i], for i < elements, stored into every
// destination. Sources and destinations may be other processes' memory mapped through CUDA IPC:
// the loads then cross NVLink or PCIe. A destination may be a source (in place): each element is
// loaded from every source before it is stored. Returns a CUDA error code (0 = launched).
int launch_reduce(Reduction reduction, const SourceList& sources, const DestinationList& outs,
                  std::size_t elements, void* stream) noexcept;

// Several copies in one launch, SM-driven (loads from peer memory, stores to local memory).
struct CopySegment {
  const void* source;
  void* destination;
  std::size_t bytes;
};
int launch_copies(const CopySegment* segments, int count, void* stream) noexcept;

} // namespace commlens::runtime
