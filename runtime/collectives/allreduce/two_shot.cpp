// Two-shot: reduce-scatter, then allgather (ipc_stages.hpp).
#include "collectives/allreduce/ipc_stages.hpp"

namespace commlens::runtime::ipc {

namespace {

std::size_t slice_start(std::size_t elements, std::size_t element_bytes, int index, int ranks) {
  if (index >= ranks) {
    return elements;
  }
  return whole_packs(elements * static_cast<std::size_t>(index) / static_cast<std::size_t>(ranks),
                     element_bytes);
}

} // namespace

void two_shot(CommunicatorEngine& engine, const IpcArguments& args, const PeerBuffers& buffers,
              IpcResult& result) {
  NodeSegment& segment = engine.segment();
  const int me = engine.rank();
  const int ranks = engine.size();
  const std::size_t element_bytes = element_size(args.reduction.type);
  const std::size_t elements = static_cast<std::size_t>(args.count);
  void* const stream = args.stream != nullptr ? args.stream : engine.stream();
  const std::size_t first = slice_start(elements, element_bytes, me, ranks);
  const std::size_t last = slice_start(elements, element_bytes, me + 1, ranks);
  SourceList sources{{}, ranks};
  for (int peer = 0; peer < ranks; ++peer) {
    sources.pointers[peer] = static_cast<const char*>(buffers.inputs[peer]) + first * element_bytes;
  }
  int error =
      launch_reduce(args.reduction, sources, {{static_cast<char*>(args.recvbuf) + first * element_bytes}, 1},
                    last - first, stream);
  error = synchronise(error, stream);
  result.bytes_peer += (last - first) * element_bytes * static_cast<std::uint64_t>(ranks - 1);
  segment.barrier(engine.next_barrier());

  CopySegment copies[kMaxRanks];
  int copy_count = 0;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == me) {
      continue;
    }
    const std::size_t peer_first = slice_start(elements, element_bytes, peer, ranks);
    const std::size_t peer_bytes =
        (slice_start(elements, element_bytes, peer + 1, ranks) - peer_first) * element_bytes;
    copies[copy_count++] = {static_cast<const char*>(buffers.outputs[peer]) + peer_first * element_bytes,
                            static_cast<char*>(args.recvbuf) + peer_first * element_bytes, peer_bytes};
    result.bytes_peer += peer_bytes;
  }
  if (error == 0) {
    error = launch_copies(copies, copy_count, stream);
  }
  error = synchronise(error, stream);
  // Peers may still be loading from this rank's buffers until they pass this barrier.
  segment.barrier(engine.next_barrier());
  result.rc = error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

} // namespace commlens::runtime::ipc
