#pragma once
// The host path of a striped allreduce between two GPUs (research 001, Ch. 4 and 5; ARCHITECTURE
// §5 "multi-path striping"): while the NVLink kernel reduces most of the data, the rest travels
// GPU -> pinned shared host memory -> peer GPU over the two PCIe links, so both kinds of link work
// at once. Each rank stages its input's host share in chunks into its ring of stages in a shared,
// pinned segment; the peer copies each chunk into a device landing buffer. D2H and H2D copies of
// successive chunks overlap (two copy streams, a ring of kStripeStages stages per rank); the
// caller reduces the landed data once its NVLink kernel is done.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

// Small enough that the pipeline fills quickly (a chunk's D2H + H2D is about 0.16 ms over PCIe
// Gen5), large enough that each copy runs at full speed.
inline constexpr std::size_t kStripeChunkBytes = std::size_t{4} << 20;
inline constexpr int kStripeStages = 8;

class HostStripe {
public:
  HostStripe() = default;
  HostStripe(const HostStripe&) = delete;
  HostStripe& operator=(const HostStripe&) = delete;
  ~HostStripe();

  // Collective over comm (two ranks of one node): the shared pinned stages and two streams. False
  // on both ranks when either failed.
  bool open(MPI_Comm comm, int rank);

  struct Exchange {
    int cuda_error = 0;
    std::uint32_t chunks = 0;
    const void* peer_data = nullptr; // the peer's bytes [offset, offset + bytes), on this GPU
  };
  // Sends this rank's input bytes [offset, offset + bytes) to the peer through host memory and
  // receives the peer's same range. Both ranks call it with the same offset and bytes; returns
  // once the peer's data has landed on this GPU (it stays valid until the next call).
  Exchange exchange(const void* input, std::size_t offset, std::size_t bytes);

private:
  struct alignas(64) Counters;
  Counters& counters(int rank) const noexcept;
  char* stage(int rank, std::uint64_t chunk) const noexcept;
  bool reserve_landing(std::size_t bytes);

  void* region_ = nullptr; // counters of both ranks, then each rank's ring of stages
  std::size_t region_bytes_ = 0;
  bool registered_ = false;
  int rank_ = 0;
  char* landing_ = nullptr; // grown on demand, kept
  std::size_t landing_bytes_ = 0;
  void* copy_out_ = nullptr; // cudaStream_t: device -> host stages
  void* copy_in_ = nullptr;  // cudaStream_t: host stages -> device ring, then the reduction
  void* staged_[kStripeStages] = {};
  void* copied_[kStripeStages] = {};
  std::uint64_t chunks_before_ = 0; // chunks of earlier calls: the shared counters never reset
};

} // namespace commlens::runtime
