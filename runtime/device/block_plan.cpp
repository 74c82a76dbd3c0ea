#include "device/block_plan.hpp"

namespace commlens::runtime::movement {

bool has_input(const CallGeometry& call, int rank) {
  switch (call.collective) {
  case Collective::Gather:
    return rank != call.root || !call.in_place; // the root's block is in its output already
  case Collective::Scatter:
    return rank == call.root;
  default:
    return true;
  }
}

bool has_output(const CallGeometry& call, int rank) {
  switch (call.collective) {
  case Collective::Gather:
    return rank == call.root;
  case Collective::Scatter:
    return rank != call.root || !call.in_place;
  case Collective::ReduceScatter: // a rank whose count is 0 receives nothing (its buffer may be null)
    return call.counts.empty() || call.counts[static_cast<std::size_t>(rank)] > 0;
  default:
    return true;
  }
}

int copies_into(const CallGeometry& call, int destination, std::span<BlockCopy, kMaxPlanRanks> copies) {
  if (reduces(call.collective) || !has_output(call, destination)) {
    return 0;
  }
  const std::uint64_t block = call.block_bytes;
  const auto d = static_cast<std::uint64_t>(destination);
  int count = 0;
  for (int step = 1; step <= call.ranks; ++step) {
    const int source = (destination + step) % call.ranks;
    const auto s = static_cast<std::uint64_t>(source);
    const bool own = source == destination;
    switch (call.collective) {
    case Collective::Allgather:
    case Collective::Gather:
      if (!(own && call.in_place)) {
        copies[count++] = {source, 0, destination, s * block, block};
      }
      break;
    case Collective::Scatter:
      if (source == call.root) {
        copies[count++] = {source, d * block, destination, 0, block};
      }
      break;
    case Collective::Alltoall:
      copies[count++] = {source, d * block, destination, s * block, block};
      break;
    default:
      break;
    }
  }
  return count;
}

std::uint64_t input_bytes(const CallGeometry& call, int rank) {
  if (!has_input(call, rank)) {
    return 0;
  }
  const auto ranks = static_cast<std::uint64_t>(call.ranks);
  switch (call.collective) {
  case Collective::Allgather:
  case Collective::Gather:
    return call.block_bytes;
  case Collective::ReduceScatter:
    if (!call.counts.empty()) {
      std::uint64_t elements = 0;
      for (const int count : call.counts) {
        elements += static_cast<std::uint64_t>(count);
      }
      return elements * call.element_bytes;
    }
    return call.block_bytes * ranks;
  default: // scatter's root, alltoall, reduce_scatter_block
    return call.block_bytes * ranks;
  }
}

Slice reduction_slice(const CallGeometry& call, int destination) {
  if (call.collective == Collective::ReduceScatterBlock || call.counts.empty()) {
    const std::uint64_t elements = call.block_bytes / call.element_bytes;
    return {elements * static_cast<std::uint64_t>(destination), elements};
  }
  std::uint64_t first = 0;
  for (int rank = 0; rank < destination; ++rank) {
    first += static_cast<std::uint64_t>(call.counts[static_cast<std::size_t>(rank)]);
  }
  return {first, static_cast<std::uint64_t>(call.counts[static_cast<std::size_t>(destination)])};
}

std::uint32_t inputs_read(const CallGeometry& call, std::uint32_t destinations) {
  std::uint32_t read = 0;
  for (int destination = 0; destination < call.ranks; ++destination) {
    if ((destinations >> destination & 1U) == 0 || !has_output(call, destination)) {
      continue;
    }
    if (reduces(call.collective)) {
      return (1U << call.ranks) - 1; // every input holds part of every slice
    }
    BlockCopy copies[kMaxPlanRanks];
    const int count = copies_into(call, destination, copies);
    for (int index = 0; index < count; ++index) {
      read |= 1U << copies[index].source;
    }
  }
  return read;
}

} // namespace commlens::runtime::movement
