// The node's part of the hierarchical algorithm (ipc_stages.hpp); the step between nodes is
// transport/inter_node_stage.
#include "collectives/allreduce/ipc_stages.hpp"

namespace commlens::runtime::ipc {

namespace {

constexpr std::uint64_t kElementsMask = 0xffffffffu;

// A non-leader's last stage of the hierarchical algorithm: copies the node's result out of the
// leader's output, in the pieces the leader announces, until it has all of it. Returns the CUDA
// error of these copies or of the leader.
int copy_announced_result(const RankSlot& leader, std::uint64_t call_tag, const void* leader_output,
                          void* output, std::size_t elements, std::size_t element_bytes, void* stream) {
  std::size_t copied = 0;
  int error = 0;
  while (copied < elements && error == 0) {
    std::uint64_t seen = leader.announced.load(std::memory_order_acquire);
    for (int spins = 0; (seen & ~kElementsMask) != call_tag || (seen & kElementsMask) <= copied; ++spins) {
      pause_spinning(spins);
      seen = leader.announced.load(std::memory_order_acquire);
    }
    const std::size_t ready = seen & kElementsMask;
    if (ready == elements && leader.cuda_error != 0) { // published before the last announcement
      return leader.cuda_error;
    }
    const CopySegment copy{static_cast<const char*>(leader_output) + copied * element_bytes,
                           static_cast<char*>(output) + copied * element_bytes,
                           (ready - copied) * element_bytes};
    error = launch_copies(&copy, 1, stream);
    copied = ready;
  }
  return synchronise(error, stream);
}

} // namespace

void reduce_to_node_leader(CommunicatorEngine& engine, const IpcArguments& args, const PeerBuffers& buffers,
                           IpcResult& result) {
  NodeSegment& segment = engine.segment();
  const int ranks = engine.size();
  const std::size_t element_bytes = element_size(args.reduction.type);
  const std::size_t elements = static_cast<std::size_t>(args.count);
  // Every rank draws the same number, so the leader's announcements of this call are told apart
  // from the last call's.
  const std::uint64_t call_tag = (engine.next_barrier() & kElementsMask) << 32;
  RankSlot& leader = segment.slot(0);
  int error = 0;
  if (engine.rank() == 0) {
    const NodeStages node{
        .reduce_into_leader =
            [&](std::size_t first, std::size_t count, void* stream) {
              SourceList sources{{}, ranks};
              for (int rank = 0; rank < ranks; ++rank) {
                sources.pointers[rank] =
                    static_cast<const char*>(buffers.inputs[rank]) + first * element_bytes;
              }
              return launch_reduce(args.reduction, sources,
                                   {{static_cast<char*>(args.recvbuf) + first * element_bytes}, 1}, count,
                                   stream);
            },
        .announce =
            [&](std::size_t ready) { leader.announced.store(call_tag | ready, std::memory_order_release); }};
    const BetweenNodes between = args.between_nodes(args.recvbuf, node);
    error = between.cuda_error;
    result.rc = between.rc;
    result.bytes_peer = elements * element_bytes * static_cast<std::uint64_t>(ranks - 1);
    result.bytes_host = between.bytes_host;
    result.chunks = between.chunks;
    leader.cuda_error = error;
    node.announce(elements); // the whole result, or (with the error above) the end of waiting
  } else {
    error = copy_announced_result(leader, call_tag, buffers.outputs[0], args.recvbuf, elements, element_bytes,
                                  engine.stream());
    result.bytes_peer = elements * element_bytes;
  }
  segment.barrier(engine.next_barrier()); // the others have read the leader's output
  if (result.rc == MPI_SUCCESS && error != 0) {
    result.rc = MPI_ERR_OTHER;
  }
}

} // namespace commlens::runtime::ipc
