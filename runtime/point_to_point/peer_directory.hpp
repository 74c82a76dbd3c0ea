#pragma once
// What a sender needs to know about a destination before choosing the rendezvous: its world rank,
// whether it shares this node, and whether it can see the GPU a block lives on (a CUDA IPC mapping
// needs the owner's GPU visible to the importer). From the runtime channel opened at MPI_Init;
// communicators' rank translations are cached until the communicator is freed.
#include "mpi_header.hpp"
#include "runtime_channel.hpp"

#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace commlens::runtime {

class PeerDirectory {
public:
  explicit PeerDirectory(const contract::RuntimeChannel& channel);

  // The world rank of `rank` in comm; -1 for inter-communicators and ranks outside MPI_COMM_WORLD.
  int world_rank(MPI_Comm comm, int rank);
  // Whether `rank` of comm is a rank of this node (only those send rendezvous headers here).
  bool on_this_node(MPI_Comm comm, int rank);
  // True when world_rank is on this node, sees `gpu`, and has not refused a mapping before.
  bool can_map(int world_rank, contract::PciGpuId gpu);
  // world_rank could not map a block of ours: later messages to it take the host path.
  void mark_unmappable(int world_rank);
  void forget(MPI_Comm comm);

private:
  std::vector<int> node_ranks_;
  std::vector<std::vector<contract::PciGpuId>> node_gpus_;
  std::mutex mutex_;
  std::map<MPI_Comm, std::vector<int>> world_ranks_; // empty vector: inter-communicator
  std::set<int> unmappable_;
};

} // namespace commlens::runtime
