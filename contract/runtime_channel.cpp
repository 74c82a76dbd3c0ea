#include "runtime_channel.hpp"

#include "node_shared_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <random>

namespace commlens::contract {

namespace {

constexpr int kMaxVisibleGpus = 16;

// Per world rank: the number of GPUs it sees, then their ids.
struct VisibleGpus {
  std::int32_t count;
  PciGpuId ids[kMaxVisibleGpus];
};

// The ranks of this rank's node, in world-rank order (the split's key).
MPI_Comm split_node(std::uint32_t ranks_per_node, int world_rank) {
  MPI_Comm node = MPI_COMM_NULL;
  if (ranks_per_node > 0) {
    PMPI_Comm_split(MPI_COMM_WORLD, world_rank / static_cast<int>(ranks_per_node), world_rank, &node);
  } else {
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  }
  return node;
}

} // namespace

RuntimeChannel open_runtime_channel(std::uint32_t ranks_per_node, const std::vector<PciGpuId>& visible_gpus) {
  int world_rank = 0;
  int world_size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  RuntimeChannel channel;
  PMPI_Comm_dup(MPI_COMM_WORLD, &channel.comm);
  MPI_Comm node = split_node(ranks_per_node, world_rank);
  int node_size = 0;
  PMPI_Comm_rank(node, &channel.node_rank);
  PMPI_Comm_size(node, &node_size);
  channel.node_world_ranks.resize(static_cast<std::size_t>(node_size));
  PMPI_Allgather(&world_rank, 1, MPI_INT, channel.node_world_ranks.data(), 1, MPI_INT, node);
  channel.node_memory = map_node_shared_memory(node, channel.node_rank,
                                               kChannelBytesPerRank * static_cast<std::size_t>(node_size));
  PMPI_Comm_free(&node);

  VisibleGpus mine{};
  mine.count = static_cast<std::int32_t>(std::min<std::size_t>(visible_gpus.size(), kMaxVisibleGpus));
  std::copy_n(visible_gpus.begin(), mine.count, mine.ids);
  std::vector<VisibleGpus> everyone(static_cast<std::size_t>(world_size));
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, everyone.data(), sizeof mine, MPI_BYTE, channel.comm);
  for (const int rank : channel.node_world_ranks) {
    const VisibleGpus& theirs = everyone[static_cast<std::size_t>(rank)];
    channel.node_visible_gpus.emplace_back(theirs.ids, theirs.ids + theirs.count);
  }

  // 128 random bits from rank 0: an application message of exactly the header's size that starts
  // with them by chance is not a practical concern.
  std::random_device entropy;
  for (std::uint64_t& word : channel.key) {
    word = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  }
  PMPI_Bcast(channel.key, 2, MPI_UINT64_T, 0, channel.comm);
  return channel;
}

void close_runtime_channel(RuntimeChannel& channel) {
  if (channel.comm != MPI_COMM_NULL) {
    PMPI_Comm_free(&channel.comm);
  }
  if (channel.node_memory != nullptr) {
    munmap(channel.node_memory, kChannelBytesPerRank * channel.node_world_ranks.size());
  }
  channel = {};
}

} // namespace commlens::contract
