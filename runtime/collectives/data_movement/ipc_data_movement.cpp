#include "collectives/data_movement/ipc_data_movement.hpp"

#include "collectives/agreement.hpp"

#include <cuda_runtime.h>

#include <algorithm>

namespace commlens::runtime {

namespace {

using movement::BlockCopy;
using movement::kMaxPlanRanks;
using movement::reduces;
using tuning::Collective;

// The rank that fills this rank's output: itself (direct), or its GPU's worker (gpu_leader): the
// root where the rooted collectives' root shares the GPU, else the GPU's first rank.
int output_writer(CommunicatorEngine& engine, const movement::CallGeometry& call,
                  tuning::MovementAlgorithm algorithm) {
  const std::vector<int>& on_my_gpu = engine.ranks_on_my_gpu();
  if (algorithm == tuning::MovementAlgorithm::Direct || on_my_gpu.empty()) {
    return engine.rank();
  }
  const bool rooted = call.collective == Collective::Gather || call.collective == Collective::Scatter;
  if (rooted && std::ranges::find(on_my_gpu, call.root) != on_my_gpu.end()) {
    return call.root;
  }
  return on_my_gpu.front();
}

// The ranks whose outputs this rank fills: its own (direct), or every one on its GPU when it is
// the GPU's writer (gpu_leader; none when it is not).
std::uint32_t destinations_served(CommunicatorEngine& engine, int writer,
                                  tuning::MovementAlgorithm algorithm) {
  if (writer != engine.rank()) {
    return 0;
  }
  if (algorithm == tuning::MovementAlgorithm::Direct || engine.ranks_on_my_gpu().empty()) {
    return 1U << engine.rank();
  }
  std::uint32_t served = 0;
  for (const int rank : engine.ranks_on_my_gpu()) {
    served |= 1U << rank;
  }
  return served;
}

// Queues this rank's part of the call on `stream`; returns a CUDA error (0: none).
int queue_work(const MovementArguments& args, const ipc::PeerBuffers& buffers, std::uint32_t served, int me,
               void* stream, IpcResult& result) {
  const movement::CallGeometry& call = args.geometry;
  int error = 0;
  for (int destination = 0; destination < call.ranks && error == 0; ++destination) {
    if ((served >> destination & 1U) == 0 || !movement::has_output(call, destination)) {
      continue;
    }
    auto* const output = static_cast<char*>(buffers.outputs[destination]);
    if (reduces(call.collective)) {
      const movement::Slice slice = movement::reduction_slice(call, destination);
      SourceList sources{{}, call.ranks};
      for (int source = 0; source < call.ranks; ++source) {
        sources.pointers[source] =
            static_cast<const char*>(buffers.inputs[source]) + slice.first * call.element_bytes;
      }
      error = launch_reduce(args.reduction, sources, {{output}, 1}, slice.elements, stream);
      result.bytes_peer += slice.elements * call.element_bytes * static_cast<std::uint64_t>(call.ranks - 1);
      continue;
    }
    BlockCopy plan[kMaxPlanRanks];
    const int count = movement::copies_into(call, destination, plan);
    CopySegment segments[kMaxPlanRanks];
    for (int index = 0; index < count; ++index) {
      const BlockCopy& copy = plan[index];
      segments[index] = {static_cast<const char*>(buffers.inputs[copy.source]) + copy.source_offset,
                         output + copy.destination_offset, copy.bytes};
      if (copy.source != me || destination != me) {
        result.bytes_peer += copy.bytes;
      }
    }
    error = launch_copies(segments, count, stream);
  }
  return error;
}

} // namespace

IpcResult ipc_data_movement(CommunicatorEngine& engine, IpcHandleCache& cache, const MovementArguments& args,
                            tuning::MovementAlgorithm algorithm) {
  IpcResult result;
  const movement::CallGeometry& call = args.geometry;
  const int me = engine.rank();
  const int writer = output_writer(engine, call, algorithm);
  const std::uint32_t served = destinations_served(engine, writer, algorithm);
  std::uint32_t outputs = 0;
  for (int rank = 0; rank < call.ranks; ++rank) {
    outputs |= movement::has_output(call, rank) ? 1U << rank : 0U;
  }
  const ipc::BufferAgreement request{.input = args.input,
                                     .output = args.output,
                                     .alignment = reduces(call.collective) ? call.element_bytes : 1,
                                     .bytes = call.block_bytes * static_cast<std::uint64_t>(call.ranks),
                                     .inputs_needed = served != 0 ? movement::inputs_read(call, served) : 0U,
                                     .outputs_needed = served & outputs & ~(1U << me),
                                     .arguments_declined = args.arguments_declined,
                                     .background_opens = args.background_opens,
                                     .ready_event = args.ready_event};
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, request, buffers, &result.reason, &result.ipc_opens)) {
    return result;
  }
  result.ran = true;
  void* const stream = args.stream != nullptr ? args.stream : engine.stream();
  int error = queue_work(args, buffers, served, me, stream, result);
  if (served != 0) {
    const int synchronised = static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    error = error != 0 ? error : synchronised;
  }
  NodeSegment& segment = engine.segment();
  segment.slot(me).cuda_error = error;
  // Peers may still be reading this rank's input, or (gpu_leader) writing its output, until here.
  segment.barrier(engine.next_barrier());
  error = error != 0 ? error : segment.slot(writer).cuda_error;
  result.rc = error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  return result;
}

} // namespace commlens::runtime
