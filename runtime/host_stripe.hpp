#pragma once
// The host path of a striped allreduce between two GPUs (research 001, Ch. 4 and 5; ARCHITECTURE
// §5 "multi-path striping"): while the NVLink kernel reduces most of the data, the rest travels
// GPU -> pinned shared host memory -> peer GPU over the two PCIe links, so both kinds of link work
// at once. Each rank stages its input's host share in chunks into its ring of stages in a shared,
// pinned segment; the peer copies each chunk into a device ring and reduces it there. D2H copies,
// H2D copies and reductions of successive chunks overlap (two copy streams, rings of kStages).
#include "device_kernels.hpp"
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

inline constexpr std::size_t kStripeChunkBytes = std::size_t{8} << 20;
inline constexpr int kStripeStages = 4;

class HostStripe {
public:
  HostStripe() = default;
  HostStripe(const HostStripe&) = delete;
  HostStripe& operator=(const HostStripe&) = delete;
  ~HostStripe();

  // Collective over comm (two ranks of one node): the shared pinned stages, a device ring, two
  // streams. False on both ranks when either failed.
  bool open(MPI_Comm comm, int rank);

  struct Outcome {
    int cuda_error = 0;
    std::uint32_t chunks = 0;
  };
  // out[i] = reduce(input of rank 0, input of rank 1)[i] for the bytes [offset, offset + bytes),
  // this rank's input and output given, the peer's input arriving through host memory. Both ranks
  // call it with the same offset and bytes; returns when this rank's part is done.
  Outcome reduce(Reduction reduction, const void* input, void* out, std::size_t offset, std::size_t bytes);

private:
  struct alignas(64) Counters;
  Counters& counters(int rank) const noexcept;
  char* stage(int rank, std::uint64_t chunk) const noexcept;

  void* region_ = nullptr; // counters of both ranks, then each rank's ring of stages
  std::size_t region_bytes_ = 0;
  bool registered_ = false;
  int rank_ = 0;
  char* device_ring_ = nullptr;
  void* copy_out_ = nullptr; // cudaStream_t: device -> host stages
  void* copy_in_ = nullptr;  // cudaStream_t: host stages -> device ring, then the reduction
  void* staged_[kStripeStages] = {};
  void* copied_[kStripeStages] = {};
  std::uint64_t chunks_before_ = 0; // chunks of earlier calls: the shared counters never reset
};

} // namespace commlens::runtime
