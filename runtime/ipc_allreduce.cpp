#include "ipc_allreduce.hpp"

#include "device_buffer.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
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
  StreamError
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
  case Decline::None:
    break;
  }
  return "";
}

Decline publish(IpcHandleCache& cache, const void* pointer, PublishedBuffer* published, int* device) {
  const BufferQuery query = query_buffer(pointer);
  if (query.kind != BufferKind::Device) {
    return query.kind == BufferKind::Managed ? Decline::ManagedBuffer : Decline::HostBuffer;
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
  Decline decline = publish(cache, input, &mine.input, &device);
  if (decline == Decline::None) {
    decline = publish(cache, args.recvbuf, &mine.output, &device);
  }
  // The buffers' producers may still run on the legacy default stream (or streams synchronising
  // with it): peers read this memory directly, so wait for them first.
  if (decline == Decline::None && cudaStreamSynchronize(cudaStreamLegacy) != cudaSuccess) {
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

std::string first_decline(CommunicatorEngine& engine) {
  for (int rank = 0; rank < engine.size(); ++rank) {
    const RankSlot& slot = engine.segment().slot(rank);
    if (slot.device_ok == 0) {
      return "rank " + std::to_string(rank) + ": " + decline_text(static_cast<Decline>(slot.decline));
    }
  }
  return {};
}

} // namespace

IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                        IpcAlgorithm algorithm) {
  IpcResult result;
  const int me = engine.rank();
  const int ranks = engine.size();
  NodeSegment& segment = engine.segment();
  RankSlot& mine = segment.slot(me);

  // 1. Agreement: every rank publishes its buffers or why it cannot.
  const Decline decline = prepare_local(cache, args, mine);
  mine.pid = static_cast<std::int32_t>(getpid());
  mine.device_ok = decline == Decline::None ? 1 : 0;
  mine.decline = static_cast<std::int32_t>(decline);
  segment.barrier(engine.next_barrier());
  result.reason = first_decline(engine);
  if (!result.reason.empty()) {
    segment.barrier(engine.next_barrier()); // slots stay readable until everyone has looked
    return result;
  }

  // 2. Map every peer's input and output (cached), then agree again: a failed open on any rank
  //    sends the whole call to the baseline instead of leaving peers waiting.
  //    One-shot needs only the GPU leaders to see buffers: every input, and the outputs of the
  //    ranks on the leader's GPU; two-shot has every rank load every input and output.
  void* inputs[kMaxRanks] = {};
  void* outputs[kMaxRanks] = {};
  const bool two_shot = algorithm == IpcAlgorithm::TwoShot;
  const bool maps_inputs = two_shot || engine.leads_my_gpu();
  const std::vector<int>& my_gpu = engine.ranks_on_my_gpu();
  bool mapped = true;
  const auto map = [&](const PublishedBuffer& buffer, std::int32_t pid) {
    int error = 0;
    bool opened = false;
    void* pointer = cache.map(pid, buffer, &opened, &error);
    result.ipc_opens += opened ? 1 : 0;
    mapped = mapped && pointer != nullptr;
    return pointer;
  };
  for (int peer = 0; peer < ranks && mapped; ++peer) {
    if (peer == me) {
      inputs[peer] = const_cast<void*>(args.sendbuf == MPI_IN_PLACE ? args.recvbuf : args.sendbuf);
      outputs[peer] = args.recvbuf;
      continue;
    }
    const RankSlot& slot = segment.slot(peer);
    if (maps_inputs) {
      inputs[peer] = map(slot.input, slot.pid);
    }
    if (two_shot || (engine.leads_my_gpu() && std::ranges::find(my_gpu, peer) != my_gpu.end())) {
      outputs[peer] = map(slot.output, slot.pid);
    }
  }
  mine.mapped_ok = mapped ? 1 : 0;
  segment.barrier(engine.next_barrier());
  for (int peer = 0; peer < ranks; ++peer) {
    if (segment.slot(peer).mapped_ok == 0) {
      result.reason = "rank " + std::to_string(peer) + ": cudaIpcOpenMemHandle failed";
      segment.barrier(engine.next_barrier());
      return result;
    }
  }

  const std::size_t element_bytes = element_size(args.reduction.type);
  const std::size_t elements = static_cast<std::size_t>(args.count);
  void* const stream = engine.stream();
  if (!two_shot) {
    // 3'. Each GPU's leader reduces every input, whole, into the outputs of the ranks on its GPU
    //     in one kernel (with one rank per GPU: every rank into its own output); the other ranks
    //     only wait. Ranks sharing a GPU thus load each input once instead of once per rank, and
    //     one process's kernel runs instead of a time slice per process. In place is safe only
    //     when a single leader reads and writes (one GPU). Striped: the NVLink kernel takes the
    //     first part, the host path the rest, at the same time.
    if (!engine.leads_my_gpu()) {
      segment.barrier(engine.next_barrier()); // the leader has written this rank's output
      result.ran = true;
      result.rc = segment.slot(my_gpu.front()).cuda_error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
      return result;
    }
    const std::size_t over_links =
        algorithm == IpcAlgorithm::OneShotStriped
            ? whole_packs(static_cast<std::size_t>(static_cast<double>(elements) * (1.0 - args.host_share)),
                          element_bytes)
            : elements;
    SourceList sources{{}, ranks};
    std::copy(inputs, inputs + ranks, sources.pointers);
    DestinationList destinations{{}, 0};
    for (const int rank : my_gpu) {
      destinations.pointers[destinations.count++] = outputs[rank];
    }
    int error = launch_reduce(args.reduction, sources, destinations, over_links, stream);
    if (over_links < elements) {
      // While the kernel runs, the host path brings the peer's remaining input; then one more
      // reduction, queued behind the NVLink kernel on the same stream.
      const std::size_t offset = over_links * element_bytes;
      const HostStripe::Exchange host =
          args.stripe->exchange(inputs[me], offset, (elements - over_links) * element_bytes);
      error = error != 0 ? error : host.cuda_error;
      SourceList rest{{}, ranks};
      for (int rank = 0; rank < ranks; ++rank) {
        rest.pointers[rank] = rank == me ? static_cast<const char*>(inputs[me]) + offset : host.peer_data;
      }
      if (error == 0) {
        error = launch_reduce(args.reduction, rest, {{static_cast<char*>(args.recvbuf) + offset}, 1},
                              elements - over_links, stream);
      }
      result.bytes_host = (elements - over_links) * element_bytes;
      result.chunks = host.chunks;
    }
    error = error != 0 ? error : static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    // Loads of other ranks' inputs and stores into other ranks' outputs, all through mappings.
    result.bytes_peer =
        over_links * element_bytes * static_cast<std::uint64_t>(ranks - 1 + destinations.count - 1);
    mine.cuda_error = error;
    segment.barrier(engine.next_barrier()); // leaders may still be loading this rank's input
    result.ran = true;
    result.rc = error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    return result;
  }

  // 3. Reduce-scatter: this rank's slice of every input into its own output.
  const std::size_t first = slice_start(elements, element_bytes, me, ranks);
  const std::size_t last = slice_start(elements, element_bytes, me + 1, ranks);
  SourceList sources{{}, ranks};
  for (int peer = 0; peer < ranks; ++peer) {
    sources.pointers[peer] = static_cast<const char*>(inputs[peer]) + first * element_bytes;
  }
  int error =
      launch_reduce(args.reduction, sources, {{static_cast<char*>(args.recvbuf) + first * element_bytes}, 1},
                    last - first, stream);
  error = error != 0 ? error : static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  result.bytes_peer += (last - first) * element_bytes * static_cast<std::uint64_t>(ranks - 1);
  segment.barrier(engine.next_barrier());

  // 4. Allgather: every other slice from its owner's (now final) output.
  CopySegment copies[kMaxRanks];
  int copy_count = 0;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == me) {
      continue;
    }
    const std::size_t peer_first = slice_start(elements, element_bytes, peer, ranks);
    const std::size_t peer_bytes =
        (slice_start(elements, element_bytes, peer + 1, ranks) - peer_first) * element_bytes;
    copies[copy_count++] = {static_cast<const char*>(outputs[peer]) + peer_first * element_bytes,
                            static_cast<char*>(args.recvbuf) + peer_first * element_bytes, peer_bytes};
    result.bytes_peer += peer_bytes;
  }
  if (error == 0) {
    error = launch_copies(copies, copy_count, stream);
  }
  error = error != 0 ? error : static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  // 5. Peers may still be loading from this rank's buffers until they pass this barrier.
  segment.barrier(engine.next_barrier());
  result.ran = true;
  result.rc = error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  return result;
}

} // namespace commlens::runtime
