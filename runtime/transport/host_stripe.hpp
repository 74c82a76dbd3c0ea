#pragma once
// The host path of a striped allreduce between two GPUs (Temuçin's "High-Performance Interconnect-Aware MPI
// communication for Deep Learning Workloads", ch. 4 and 5, multi-path striping): while the
// NVLink kernel reduces most of the data, the rest travels GPU -> pinned shared host memory -> peer GPU over
// the two PCIe links, so both kinds of link work at once. Each rank writes its input's host share into its
// own ring of stages (stage_ring.hpp) in a shared, pinned segment and reads the peer's ring into a device
// landing buffer; the caller reduces the landed data once its NVLink kernel is done.
#include "mpi_header.hpp"
#include "transport/stage_ring.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

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
  StageRing ring(int rank) const noexcept;
  bool reserve_landing(std::size_t bytes);

  void* region_ = nullptr; // both rings' counters, then each rank's ring of stages
  std::size_t region_bytes_ = 0;
  bool registered_ = false;
  int rank_ = 0;
  char* landing_ = nullptr; // grown on demand, kept
  std::size_t landing_bytes_ = 0;
  CopyLane out_; // device -> own stages
  CopyLane in_;  // peer's stages -> landing buffer
};

} // namespace commlens::runtime
