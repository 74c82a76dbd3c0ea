#pragma once
// The GPU runtime's own channel for device-buffer point-to-point, opened at MPI_Init on every rank
// (the one place where the core may run collectives without risking a rank that never arrives): a
// duplicate of MPI_COMM_WORLD for the runtime's protocol messages (rendezvous replies, data that
// falls back to the host path), the world ranks that share this rank's node (CUDA IPC reaches only
// those), and a job-wide random key that marks the rendezvous headers the runtime sends in place of
// a message.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commlens::contract {

// A GPU as PCI domain << 16 | bus << 8 | device: the same physical GPU whatever index
// CUDA_VISIBLE_DEVICES gives it in each process.
using PciGpuId = std::uint32_t;

// The node segment's share of each rank: 256 KiB for the runtime's hand-over slots, then 32 MiB for
// its ring of host stages for striped messages (runtime/point_to_point/rendezvous_protocol.hpp).
// The ring's pages are committed only when the runtime first pins them, which only striping does.
inline constexpr std::size_t kChannelBytesPerRank = (std::size_t{256} << 10) + (std::size_t{32} << 20);

struct RuntimeChannel {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> node_world_ranks;                    // ascending, this rank included
  std::vector<std::vector<PciGpuId>> node_visible_gpus; // per entry of node_world_ranks
  // kChannelBytesPerRank per entry of node_world_ranks, zeroed; null when it could not be made.
  void* node_memory = nullptr;
  int node_rank = 0; // this rank's entry
  std::uint64_t key[2] = {0, 0};
};

// Collective over MPI_COMM_WORLD. ranks_per_node > 0: every so many consecutive world ranks are one
// node (COMMLENS_RUNTIME_RANKS_PER_NODE), else the ranks sharing memory with this one.
// visible_gpus: the GPUs this process can see (a CUDA IPC mapping needs the owner's GPU visible).
RuntimeChannel open_runtime_channel(std::uint32_t ranks_per_node, const std::vector<PciGpuId>& visible_gpus);
void close_runtime_channel(RuntimeChannel& channel);

} // namespace commlens::contract
