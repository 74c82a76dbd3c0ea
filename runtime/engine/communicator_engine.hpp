#pragma once
// The runtime's state for one communicator, set up once by a collective bootstrap the first time
// the runtime meets the communicator: whether it can serve it at all (intra-communicator, every
// rank on one node, at most kMaxRanks ranks, shared memory available), which ranks share a GPU,
// the node segment for agreement and barriers, a stream, and the A/B alternation counters.
#include "device/device_kernels.hpp"
#include "engine/ab_alternation.hpp"
#include "engine/stream_set.hpp"
#include "mpi_header.hpp"
#include "resident/resident_channel.hpp"
#include "transport/host_stripe.hpp"
#include "transport/inter_node_stage.hpp"
#include "transport/node_segment.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace commlens::runtime {

class CommunicatorEngine {
public:
  // Collective over comm. Always returns an engine; usable() says whether the runtime can serve it.
  // ranks_per_node > 0 treats every so many consecutive ranks of MPI_COMM_WORLD as one node
  // (COMMLENS_RUNTIME_RANKS_PER_NODE, for testing the hierarchical algorithm on one machine).
  // A node part (node_part) may have a single rank: its node stages are then a local copy.
  static std::unique_ptr<CommunicatorEngine> bootstrap(MPI_Comm comm, int ranks_per_node,
                                                       bool node_part = false);
  ~CommunicatorEngine();

  bool usable() const noexcept { return why_unusable_.empty(); }
  // A communicator spanning several nodes: its calls run hierarchically, through the engine of
  // this rank's node part and the communicator of the node leaders (null on other ranks).
  bool spans_nodes() const noexcept { return node_engine_ != nullptr; }
  CommunicatorEngine& node_engine() noexcept { return *node_engine_; }
  MPI_Comm node_leaders() const noexcept { return node_leaders_; }
  InterNodeStage& inter_node_stage() noexcept { return inter_node_stage_; }
  const std::string& why_unusable() const noexcept { return why_unusable_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  NodeSegment& segment() noexcept { return segment_; }
  // Single-node engines: GPUs the ranks run on (ranks on one GPU count it once), and the ranks on
  // this rank's GPU in ascending order; the first of them leads the GPU (runs the GPU's share of
  // one-shot work).
  int gpu_count() const noexcept { return gpu_count_; }
  const std::vector<int>& ranks_on_my_gpu() const noexcept { return ranks_on_my_gpu_; }
  // Every rank's GPU as an index (0 .. gpu_count - 1), equal for ranks sharing one.
  const std::vector<int>& gpu_of_rank() const noexcept { return gpu_of_rank_; }
  bool leads_my_gpu() const noexcept {
    return !ranks_on_my_gpu_.empty() && ranks_on_my_gpu_.front() == rank_;
  }
  // Whether every rank's process saw CUDA MPS serving the GPUs when it started (agreed, so every
  // rank keys the tuning rules alike).
  bool mps() const noexcept { return mps_; }
  // The next barrier number (every rank counts the same barriers, so the numbers agree).
  std::uint64_t next_barrier() noexcept { return ++barriers_; }
  // The rooted collectives' segment counters (RankSlot::segments_done) before this call, which
  // then adds `segments`: every rank makes the same calls, so the bases agree without resets.
  std::uint64_t segment_base(std::uint32_t segments) noexcept {
    const std::uint64_t base = segments_;
    segments_ += segments;
    return base;
  }
  // True on the engine's first call only (every rank of it makes the same calls).
  bool first_call() noexcept { return calls_++ == 0; }
  // A blocking stream on the current device (it orders after work on the legacy default stream).
  void* stream();
  // Blocking streams beside stream() that the trees spread their segments over.
  StreamSet& tree_streams() noexcept { return tree_streams_; }

  // The host path for striped transfers, opened on first use. Collective over comm: call it only
  // from decisions every rank makes alike (the tuning table's safety rules allow striping only for
  // two ranks on two GPUs). Null unless the communicator has exactly two ranks, or when the pinned
  // shared stages could not be made.
  HostStripe* host_stripe(MPI_Comm comm);

  // The resident kernel's channel (resident/), opened on first use with halves of slot_bytes.
  // Collective over comm: call it only from decisions every rank makes alike. Null on every rank
  // when it could not be opened; *problem then says why (on the call that tried).
  resident::Channel* resident_channel(MPI_Comm comm, std::uint64_t slot_bytes, std::uint64_t linger_ns,
                                      std::string* problem);

  // COMMLENS_RUNTIME=ab: true for the runtime half (ab_alternation.hpp).
  bool ab_turn_is_runtime(int count, MPI_Datatype datatype, MPI_Op op);
  // The same for the data-movement collectives, whose signature equal on every rank is the
  // function and its block size (datatypes may differ between ranks).
  bool ab_turn_is_runtime(std::uint16_t function, std::uint64_t block_bytes);
  // The same for the rooted collectives, by function, root, bytes and op (a bcast's count and
  // datatype may differ between ranks, its bytes may not).
  bool ab_turn_is_runtime(int function, int root, std::uint64_t bytes, MPI_Op op) {
    return rooted_ab_.runtime_turn(function, root, bytes, op);
  }

private:
  CommunicatorEngine() = default;
  void learn_gpu_sharing(MPI_Comm comm);
  void split_into_nodes(MPI_Comm comm, MPI_Comm node, int ranks_per_node);

  std::string why_unusable_;
  int rank_ = 0;
  int size_ = 0;
  NodeSegment segment_;
  int gpu_count_ = 0;
  std::vector<int> ranks_on_my_gpu_;
  std::vector<int> gpu_of_rank_;
  bool mps_ = false;
  std::uint64_t segments_ = 0;
  std::uint64_t barriers_ = 0;
  std::uint64_t calls_ = 0;
  void* stream_ = nullptr;
  StreamSet tree_streams_{false};
  std::unique_ptr<HostStripe> stripe_;
  std::unique_ptr<CommunicatorEngine> node_engine_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm node_leaders_ = MPI_COMM_NULL;
  InterNodeStage inter_node_stage_;
  bool stripe_tried_ = false;
  std::unique_ptr<resident::Channel> resident_;
  bool resident_tried_ = false;
  AbAlternation<int, MPI_Datatype, MPI_Op> ab_;
  AbAlternation<std::uint16_t, std::uint64_t> ab_blocks_;
  AbAlternation<int, int, std::uint64_t, MPI_Op> rooted_ab_;
};

// Engines by communicator, made on first use and dropped when the communicator is freed.
class EngineRegistry {
public:
  CommunicatorEngine& engine_for(MPI_Comm comm, int ranks_per_node);
  void forget(MPI_Comm comm);
  void clear();

private:
  std::mutex mutex_;
  std::map<MPI_Comm, std::unique_ptr<CommunicatorEngine>> engines_;
};

} // namespace commlens::runtime
