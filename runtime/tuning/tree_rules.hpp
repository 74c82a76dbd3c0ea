#pragma once
// Which tree, segment size, window and streams a rooted collective (bcast, reduce) on device buffers runs
// with: the first matching rule of the table's "trees" section, else a fixed choice. Any tree
// computes the right result, so unlike the allreduce rules no safety check applies.
#include "tuning_table.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace commlens::runtime::tuning {

struct TreeCall {
  RootedCollective collective = RootedCollective::Bcast;
  int ranks = 2;
  int gpus = 1; // distinct GPUs of the communicator's ranks
  std::uint64_t bytes = 0;
  bool mps = false; // every rank's process saw MPS (CommunicatorEngine::mps)
};

struct TreeChoice {
  trees::LevelShapes shapes;
  std::uint64_t segment_bytes = 0;
  std::uint32_t window = 1;
  std::uint32_t streams = 1;
  std::string source; // runtime_ops.decision_source: table:NAME tree rule N, or fallback
  bool push = false;  // TreeRule::push
};

// Limits a rule's values must keep (the parser's range checks).
inline constexpr std::uint64_t kMinSegmentBytes = 4096;
inline constexpr std::uint64_t kMaxSegmentBytes = std::uint64_t{64} << 20;
inline constexpr std::uint32_t kMaxWindow = 64;
inline constexpr std::uint32_t kMaxStreams = 8; // as COMMLENS_RUNTIME_TREE_STREAMS

TreeChoice choose_tree(const Table& table, std::string_view table_name, const TreeCall& call);

const char* collective_name(RootedCollective collective) noexcept; // bcast, reduce

} // namespace commlens::runtime::tuning
