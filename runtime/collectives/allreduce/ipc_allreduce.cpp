#include "collectives/allreduce/ipc_allreduce.hpp"

#include "selection_thresholds.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <span>
#include <string>

namespace commlens::runtime {

namespace {

// Why a rank cannot take the runtime path; published in its slot so every rank reports the same.
enum class Decline : std::int32_t {
  None = 0,
  HostBuffer,
  ManagedBuffer,
  OtherDevice,
  NotExportable,
  StreamError,
  Misaligned
};

const char* decline_text(Decline decline) {
  switch (decline) {
  case Decline::HostBuffer:
    return "host buffer";
  case Decline::ManagedBuffer:
    return "managed (unified) memory buffer";
  case Decline::OtherDevice:
    return "buffers on different GPUs, or not on the current one";
  case Decline::NotExportable:
    return "buffer not exportable through CUDA IPC (e.g. a stream-ordered pool allocation)";
  case Decline::StreamError:
    return "CUDA error while waiting for the buffer's producers";
  case Decline::Misaligned:
    return "buffer not aligned to its element type (the kernels load whole elements)";
  case Decline::None:
    break;
  }
  return "";
}

Decline publish(IpcHandleCache& cache, const void* pointer, std::size_t element_bytes,
                PublishedBuffer* published, int* device) {
  const BufferQuery query = query_buffer(pointer);
  if (query.kind != BufferKind::Device) {
    return query.kind == BufferKind::Managed ? Decline::ManagedBuffer : Decline::HostBuffer;
  }
  if (reinterpret_cast<std::uintptr_t>(pointer) % element_bytes != 0) {
    return Decline::Misaligned;
  }
  int current = -1;
  cudaGetDevice(&current);
  if (query.device.device != current || (*device >= 0 && *device != query.device.device)) {
    return Decline::OtherDevice;
  }
  *device = query.device.device;
  published->offset = static_cast<std::uint64_t>(static_cast<const char*>(pointer) -
                                                 static_cast<const char*>(query.device.base));
  int error = 0;
  return cache.export_handle(query.device.base, query.device.buffer_id, published, &error)
             ? Decline::None
             : Decline::NotExportable;
}

Decline prepare_local(IpcHandleCache& cache, const AllreduceArguments& args, RankSlot& mine) {
  int device = -1;
  const void* input = args.sendbuf == MPI_IN_PLACE ? args.recvbuf : args.sendbuf;
  const std::size_t element_bytes = element_size(args.reduction.type);
  Decline decline = publish(cache, input, element_bytes, &mine.input, &device);
  if (decline == Decline::None) {
    decline = publish(cache, args.recvbuf, element_bytes, &mine.output, &device);
  }
  cache.publish_freed_exports(&mine.freed);
  // The buffers' producers may still run on the legacy default stream (or streams synchronising
  // with it): peers read this memory directly, so wait for them first.
  if (decline == Decline::None && !wait_for_legacy_stream()) {
    decline = Decline::StreamError;
  }
  return decline;
}

// Slice boundaries in elements, rounded to 16-byte packs so every slice keeps vector alignment.
std::size_t whole_packs(std::size_t elements, std::size_t element_bytes) {
  const std::size_t per_pack = 16 / element_bytes;
  return elements / per_pack * per_pack;
}

std::size_t slice_start(std::size_t elements, std::size_t element_bytes, int index, int ranks) {
  if (index >= ranks) {
    return elements;
  }
  return whole_packs(elements * static_cast<std::size_t>(index) / static_cast<std::size_t>(ranks),
                     element_bytes);
}

// What a first use of peer buffers would cost, against the host path (selection_thresholds.hpp).
bool host_path_is_faster(std::size_t unmapped, std::uint64_t bytes, const IpcHandleCache& cache) {
  return cache.opening_costs_more(unmapped, tuning::kHostPathFixedNs + tuning::kHostPathNsPerByte * bytes);
}

std::string first_decline(CommunicatorEngine& engine) {
  for (int rank = 0; rank < engine.size(); ++rank) {
    const RankSlot& slot = engine.segment().slot(rank);
    if (slot.device_ok == 0) {
      return "rank " + std::to_string(rank) + ": " + decline_text(static_cast<Decline>(slot.decline));
    }
  }
  return {};
}

// Every rank's buffers as this rank sees them: its own, and the peers' it mapped (null otherwise).
struct PeerBuffers {
  void* inputs[kMaxRanks] = {};
  void* outputs[kMaxRanks] = {};
};

// Whose buffers this rank maps for an algorithm: one-shot needs only the GPU leaders to see
// buffers (every input, and the outputs of the ranks on the leader's GPU); reduce-to-leader has
// the node leader load every input and every other rank load the leader's output; two-shot has
// every rank load every input and output.
bool maps_input(const CommunicatorEngine& engine, IpcAlgorithm algorithm) {
  switch (algorithm) {
  case IpcAlgorithm::TwoShot:
    return true;
  case IpcAlgorithm::ReduceToNodeLeader:
    return engine.rank() == 0;
  default:
    return engine.leads_my_gpu();
  }
}

bool maps_output(const CommunicatorEngine& engine, IpcAlgorithm algorithm, int peer) {
  switch (algorithm) {
  case IpcAlgorithm::TwoShot:
    return true;
  case IpcAlgorithm::ReduceToNodeLeader:
    return engine.rank() != 0 && peer == 0;
  default:
    return engine.leads_my_gpu() &&
           std::ranges::find(engine.ranks_on_my_gpu(), peer) != engine.ranks_on_my_gpu().end();
  }
}

// The peers' buffers this rank needs for the algorithm, mapped (cached), or, when some are not
// mapped yet and the host path is faster than opening them, queued for the worker (kMapDeferred).
MapState map_peer_buffers(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                          IpcAlgorithm algorithm, PeerBuffers& buffers, IpcResult& result) {
  const int me = engine.rank();
  buffers.inputs[me] = const_cast<void*>(args.sendbuf == MPI_IN_PLACE ? args.recvbuf : args.sendbuf);
  buffers.outputs[me] = args.recvbuf;
  struct Needed {
    void** local;
    const PublishedBuffer* buffer;
    std::int32_t pid;
  };
  std::array<Needed, 2 * kMaxRanks> needs{}; // every call runs this: no allocation
  std::size_t count = 0;
  for (int peer = 0; peer < engine.size(); ++peer) {
    const RankSlot& slot = engine.segment().slot(peer);
    if (peer != me && maps_input(engine, algorithm)) {
      needs[count++] = {&buffers.inputs[peer], &slot.input, slot.pid};
    }
    if (peer != me && maps_output(engine, algorithm, peer)) {
      needs[count++] = {&buffers.outputs[peer], &slot.output, slot.pid};
    }
  }
  const std::span<const Needed> needed(needs.data(), count);
  if (args.background_opens) {
    using Readiness = IpcHandleCache::Readiness;
    std::size_t unmapped = 0;
    bool refused = false; // the worker could not open one: this call opens it (and may retry)
    for (const Needed& need : needed) {
      const Readiness readiness = cache.readiness(need.pid, *need.buffer);
      unmapped += readiness != Readiness::Mapped ? 1 : 0;
      refused = refused || readiness == Readiness::RefusedInBackground;
    }
    const std::uint64_t bytes = static_cast<std::uint64_t>(args.count) * element_size(args.reduction.type);
    if (unmapped > 0 && !refused && host_path_is_faster(unmapped, bytes, cache)) {
      int device = 0;
      cudaGetDevice(&device);
      for (const Needed& need : needed) {
        cache.open_later(need.pid, *need.buffer, device);
      }
      return kMapDeferred;
    }
  }
  const std::uint64_t epoch = cache.call_epoch();
  for (const Needed& need : needed) {
    int error = 0;
    bool opened = false;
    *need.local = cache.map(need.pid, *need.buffer, epoch, &opened, &error);
    result.ipc_opens += opened ? 1 : 0;
    if (*need.local == nullptr) {
      return kMapFailed;
    }
  }
  return kMapped;
}

// 1. Agreement: every rank publishes its buffers or why it cannot. 2. Mapping of the peers'
// buffers this rank needs (cached), then agreement again: a failed open on any rank sends the
// whole call to the baseline instead of leaving peers waiting. With `vote` (ranks on other nodes:
// the hierarchical algorithm) every rank of the whole communicator then votes, so all nodes go the
// same way. Every rank of the node takes the same branches, so the barrier numbers agree.
// Returns whether the call runs here; on false the barriers are done and result.reason says why.
bool agree_and_map(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                   IpcAlgorithm algorithm, PeerBuffers& buffers, IpcResult& result) {
  const int me = engine.rank();
  NodeSegment& segment = engine.segment();
  RankSlot& mine = segment.slot(me);
  const Decline decline = prepare_local(cache, args, mine);
  mine.pid = static_cast<std::int32_t>(getpid());
  mine.device_ok = decline == Decline::None ? 1 : 0;
  mine.decline = static_cast<std::int32_t>(decline);
  segment.barrier(engine.next_barrier());
  for (int peer = 0; peer < engine.size(); ++peer) {
    if (peer != me) {
      cache.close_freed(segment.slot(peer).pid, segment.slot(peer).freed);
    }
  }
  result.reason = first_decline(engine);
  bool ok = result.reason.empty();
  if (ok) {
    mine.mapped_ok = map_peer_buffers(engine, cache, args, algorithm, buffers, result);
    segment.barrier(engine.next_barrier());
    for (int peer = 0; peer < engine.size() && ok; ++peer) {
      if (segment.slot(peer).mapped_ok == kMapFailed) {
        result.reason = "rank " + std::to_string(peer) + ": cudaIpcOpenMemHandle failed";
        ok = false;
      }
    }
    for (int peer = 0; peer < engine.size() && ok; ++peer) {
      if (segment.slot(peer).mapped_ok == kMapDeferred) {
        result.reason = kFirstUseReason;
        ok = false;
      }
    }
  }
  if (args.vote != MPI_COMM_NULL) {
    int here = ok ? 1 : 0, everywhere = 0;
    PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, args.vote);
    if (everywhere == 0 && ok) {
      result.reason = "a rank on another node cannot take the call";
      ok = false;
    }
  }
  if (!ok) {
    segment.barrier(engine.next_barrier()); // slots stay readable until everyone has looked
  }
  return ok;
}

int synchronise(int error, void* stream) {
  return error != 0 ? error : static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

// Each GPU's leader reduces every input, whole, into the outputs of the ranks on its GPU in one
// kernel (with one rank per GPU: every rank into its own output); the other ranks only wait. Ranks
// sharing a GPU thus load each input once instead of once per rank, and one process's kernel runs
// instead of a time slice per process. In place is safe only when a single leader reads and
// writes (one GPU). Striped: the NVLink kernel takes the first part, the host path the rest, at
// the same time.
void one_shot(CommunicatorEngine& engine, const AllreduceArguments& args, IpcAlgorithm algorithm,
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
  void* const stream = engine.stream();
  const std::size_t over_links =
      algorithm == IpcAlgorithm::OneShotStriped
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

// Reduce-scatter (this rank's slice of every input into its own output), then allgather (every
// other slice from its owner's final output).
void two_shot(CommunicatorEngine& engine, const AllreduceArguments& args, const PeerBuffers& buffers,
              IpcResult& result) {
  NodeSegment& segment = engine.segment();
  const int me = engine.rank();
  const int ranks = engine.size();
  const std::size_t element_bytes = element_size(args.reduction.type);
  const std::size_t elements = static_cast<std::size_t>(args.count);
  void* const stream = engine.stream();
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

// The node's part of the hierarchical algorithm, pipelined in the chunks of the step between
// nodes: the node leader (rank 0) reduces a chunk of every input of the node into its own output
// just before the chunk goes between nodes (args.between_nodes), and announces each chunk once the
// final result is back in its output; every other rank copies announced chunks out meanwhile. In
// place is safe: the leader reads and writes each element in one kernel, and the others overwrite
// a chunk of their buffers only after the leader has reduced it.
void reduce_to_node_leader(CommunicatorEngine& engine, const AllreduceArguments& args,
                           const PeerBuffers& buffers, IpcResult& result) {
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

} // namespace

IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                        IpcAlgorithm algorithm) {
  IpcResult result;
  PeerBuffers buffers;
  if (!agree_and_map(engine, cache, args, algorithm, buffers, result)) {
    return result;
  }
  result.ran = true;
  switch (algorithm) {
  case IpcAlgorithm::TwoShot:
    two_shot(engine, args, buffers, result);
    break;
  case IpcAlgorithm::ReduceToNodeLeader:
    reduce_to_node_leader(engine, args, buffers, result);
    break;
  case IpcAlgorithm::OneShot:
  case IpcAlgorithm::OneShotStriped:
    one_shot(engine, args, algorithm, buffers, result);
    break;
  }
  return result;
}

} // namespace commlens::runtime
