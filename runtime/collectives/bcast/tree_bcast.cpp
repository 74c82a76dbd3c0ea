#include "collectives/bcast/tree_bcast.hpp"

#include "collectives/ipc_call.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>
#include <vector>

namespace commlens::runtime {

TreeOutcome tree_bcast(CommunicatorEngine& engine, IpcHandleCache& cache, void* buffer, std::uint64_t bytes,
                       int root, const TreeSettings& settings, bool non_contiguous, LaneStreams lane) {
  const trees::Tree tree = engine_tree(engine, root, settings.shapes);
  const int me = engine.rank();
  const int parent = tree.parent[me];
  // Bytes: a broadcast copies, whatever the elements are, so any alignment will do.
  IpcArguments args{.sendbuf = buffer,
                    .recvbuf = buffer,
                    .count = static_cast<int>(std::min<std::uint64_t>(bytes, INT_MAX)),
                    .reduction = {ElementType::UInt8, ReduceOp::Sum},
                    .background_opens = settings.background_opens,
                    .non_contiguous = non_contiguous,
                    .ready_event = lane.ready_event};
  const std::vector<int>& children = tree.children[me];
  const std::uint32_t outputs = settings.push ? rank_mask(children) : parent >= 0 ? 1U << parent : 0;
  TreeOutcome outcome;
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, args, 0, outputs, buffers, outcome.result)) {
    return outcome;
  }
  outcome.result.ran = true;
  const trees::SegmentPlan plan(bytes, 1, settings.segment_bytes);
  outcome.segments = plan.count();
  outcome.segment_bytes = plan.segment_bytes();
  const std::span<const int> upstream(&tree.parent[me], parent >= 0 ? 1 : 0);
  // Pulling: copy the parent's segment into this buffer; the children read this one. Pushing: copy
  // this buffer's segment into each child's; a leaf has no work and returns once its parent is done.
  std::vector<std::pair<char*, const char*>> copies; // destination, source
  if (settings.push) {
    for (const int child : children) {
      copies.emplace_back(static_cast<char*>(buffers.outputs[child]), static_cast<const char*>(buffer));
    }
  } else if (parent >= 0) {
    copies.emplace_back(static_cast<char*>(buffer), static_cast<const char*>(buffers.outputs[parent]));
  }
  const bool pushed_leaf = settings.push && children.empty();
  const PipelineResult pipeline = run_pipeline(
      engine,
      {.segments = plan,
       .window = settings.window,
       .blocking = settings.blocking,
       .upstream = upstream,
       .readers =
           settings.push ? (pushed_leaf ? upstream : std::span<const int>{}) : std::span<const int>(children),
       .has_work = !copies.empty(),
       .noise = settings.noise,
       .stream = lane.stream,
       .streams = settings.streams,
       .more_streams = lane.more_streams},
      [&](std::uint32_t index, void* stream) {
        const trees::Segment segment = plan.segment(index);
        for (const auto& [destination, source] : copies) {
          const cudaError_t error =
              cudaMemcpyAsync(destination + segment.offset, source + segment.offset, segment.bytes,
                              cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
          if (error != cudaSuccess) {
            return static_cast<int>(error);
          }
        }
        return 0;
      });
  outcome.result.bytes_peer = copies.size() * bytes;
  outcome.result.chunks = plan.count();
  outcome.result.rc = pipeline.error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  outcome.streams = pipeline.streams;
  return outcome;
}

} // namespace commlens::runtime
