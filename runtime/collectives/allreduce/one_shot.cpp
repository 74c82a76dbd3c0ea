// One-shot and striped one-shot (ipc_stages.hpp).
#include "collectives/allreduce/ipc_stages.hpp"

#include <algorithm>

namespace commlens::runtime::ipc {

void one_shot(CommunicatorEngine& engine, const IpcArguments& args, tuning::AllreduceAlgorithm algorithm,
              const PeerBuffers& buffers, IpcResult& result) {
  NodeSegment& segment = engine.segment();
  const int me = engine.rank();
  const int ranks = engine.size();
  const std::vector<int>& my_gpu = engine.ranks_on_my_gpu();
  if (!engine.leads_my_gpu()) {
    segment.barrier(engine.next_barrier()); // the leader has written this rank's output
    result.rc = segment.slot(my_gpu.front()).cuda_error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    return;
  }
  const std::size_t element_bytes = element_size(args.reduction.type);
  const std::size_t elements = static_cast<std::size_t>(args.count);
  void* const stream = args.stream != nullptr ? args.stream : engine.stream();
  const std::size_t over_links =
      algorithm == tuning::AllreduceAlgorithm::OneShotStriped
          ? whole_packs(static_cast<std::size_t>(static_cast<double>(elements) * (1.0 - args.host_share)),
                        element_bytes)
          : elements;
  SourceList sources{{}, ranks};
  std::copy(buffers.inputs, buffers.inputs + ranks, sources.pointers);
  DestinationList destinations{{}, 0};
  for (const int rank : my_gpu) {
    destinations.pointers[destinations.count++] = buffers.outputs[rank];
  }
  int error = launch_reduce(args.reduction, sources, destinations, over_links, stream);
  if (over_links < elements) {
    // While the kernel runs, the host path brings the peer's remaining input; then one more
    // reduction, queued behind the NVLink kernel on the same stream.
    const std::size_t offset = over_links * element_bytes;
    const HostStripe::Exchange host =
        args.stripe->exchange(buffers.inputs[me], offset, (elements - over_links) * element_bytes);
    error = error != 0 ? error : host.cuda_error;
    SourceList rest{{}, ranks};
    for (int rank = 0; rank < ranks; ++rank) {
      rest.pointers[rank] =
          rank == me ? static_cast<const char*>(buffers.inputs[me]) + offset : host.peer_data;
    }
    if (error == 0) {
      error = launch_reduce(args.reduction, rest, {{static_cast<char*>(args.recvbuf) + offset}, 1},
                            elements - over_links, stream);
    }
    result.bytes_host = (elements - over_links) * element_bytes;
    result.chunks = host.chunks;
  }
  error = synchronise(error, stream);
  // Loads of other ranks' inputs and stores into other ranks' outputs, all through mappings.
  result.bytes_peer =
      over_links * element_bytes * static_cast<std::uint64_t>(ranks - 1 + destinations.count - 1);
  segment.slot(me).cuda_error = error;
  segment.barrier(engine.next_barrier()); // leaders may still be loading this rank's input
  result.rc = error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

} // namespace commlens::runtime::ipc
