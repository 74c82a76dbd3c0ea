#include "point_to_point/peer_directory.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>

namespace commlens::runtime {

PeerDirectory::PeerDirectory(const contract::RuntimeChannel& channel)
    : node_ranks_(channel.node_world_ranks), node_gpus_(channel.node_visible_gpus) {}

int PeerDirectory::world_rank(MPI_Comm comm, int rank) {
  std::lock_guard lock(mutex_);
  auto found = world_ranks_.find(comm);
  if (found == world_ranks_.end()) {
    std::vector<int> translated;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter == 0) {
      int size = 0;
      PMPI_Comm_size(comm, &size);
      std::vector<int> ranks(static_cast<std::size_t>(size));
      std::iota(ranks.begin(), ranks.end(), 0);
      translated.resize(ranks.size());
      MPI_Group group = MPI_GROUP_NULL;
      MPI_Group world = MPI_GROUP_NULL;
      PMPI_Comm_group(comm, &group);
      PMPI_Comm_group(MPI_COMM_WORLD, &world);
      PMPI_Group_translate_ranks(group, size, ranks.data(), world, translated.data());
      PMPI_Group_free(&group);
      PMPI_Group_free(&world);
    }
    found = world_ranks_.emplace(comm, std::move(translated)).first;
  }
  const std::vector<int>& ranks = found->second;
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks.size() || ranks[rank] == MPI_UNDEFINED) {
    return -1;
  }
  return ranks[static_cast<std::size_t>(rank)];
}

bool PeerDirectory::on_this_node(MPI_Comm comm, int rank) {
  const int world = world_rank(comm, rank);
  return world >= 0 && std::ranges::find(node_ranks_, world) != node_ranks_.end();
}

bool PeerDirectory::can_map(int world_rank, contract::PciGpuId gpu) {
  const auto on_node = std::ranges::find(node_ranks_, world_rank);
  if (on_node == node_ranks_.end()) {
    return false;
  }
  const auto& visible = node_gpus_[static_cast<std::size_t>(on_node - node_ranks_.begin())];
  std::lock_guard lock(mutex_);
  return std::ranges::find(visible, gpu) != visible.end() && !unmappable_.contains(world_rank);
}

void PeerDirectory::mark_unmappable(int world_rank) {
  std::lock_guard lock(mutex_);
  unmappable_.insert(world_rank);
}

void PeerDirectory::forget(MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  world_ranks_.erase(comm);
}

} // namespace commlens::runtime
