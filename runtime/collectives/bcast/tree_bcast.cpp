#include "collectives/bcast/tree_bcast.hpp"

#include "collectives/allreduce/ipc_stages.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace commlens::runtime {

TreeOutcome tree_bcast(CommunicatorEngine& engine, IpcHandleCache& cache, void* buffer, std::uint64_t bytes,
                       int root, const TreeSettings& settings, bool non_contiguous, LaneStreams lane) {
  const trees::Tree tree = engine_tree(engine, root, settings.shapes);
  const int me = engine.rank();
  const int parent = tree.parent[me];
  // Bytes: a broadcast copies, whatever the elements are, so any alignment will do.
  AllreduceArguments args{.sendbuf = buffer,
                          .recvbuf = buffer,
                          .count = static_cast<int>(std::min<std::uint64_t>(bytes, INT_MAX)),
                          .reduction = {ElementType::UInt8, ReduceOp::Sum},
                          .background_opens = settings.background_opens,
                          .non_contiguous = non_contiguous,
                          .ready_event = lane.ready_event};
  args.tree_outputs = parent >= 0 ? 1U << parent : 0;
  TreeOutcome outcome;
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, args, IpcAlgorithm::Tree, buffers, outcome.result)) {
    return outcome;
  }
  outcome.result.ran = true;
  const trees::SegmentPlan plan(bytes, 1, settings.segment_bytes);
  outcome.segments = plan.count();
  outcome.segment_bytes = plan.segment_bytes();
  const char* source = parent >= 0 ? static_cast<const char*>(buffers.outputs[parent]) : nullptr;
  const std::span<const int> upstream(&tree.parent[me], parent >= 0 ? 1 : 0);
  const PipelineResult pipeline =
      run_pipeline(engine,
                   {.segments = plan,
                    .window = settings.window,
                    .blocking = settings.blocking,
                    .upstream = upstream,
                    .readers = tree.children[me],
                    .has_work = parent >= 0,
                    .noise = settings.noise,
                    .stream = lane.stream,
                    .streams = settings.streams,
                    .more_streams = lane.more_streams},
                   [&](std::uint32_t index, void* stream) {
                     const trees::Segment segment = plan.segment(index);
                     return static_cast<int>(cudaMemcpyAsync(
                         static_cast<char*>(buffer) + segment.offset, source + segment.offset, segment.bytes,
                         cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
                   });
  outcome.result.bytes_peer = parent >= 0 ? bytes : 0;
  outcome.result.chunks = plan.count();
  outcome.result.rc = pipeline.error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  outcome.streams = pipeline.streams;
  return outcome;
}

void record_tree_run(const TreeSettings& settings, const TreeOutcome& outcome, RuntimeOp& row) {
  record_ran(outcome.result, row);
  row.implementation = Implementation::Tree;
  // One stream, today's name; more, the name says how many (every rank the same: the setting).
  const std::string streams =
      !settings.blocking && settings.streams > 1 ? fmt::format(":streams={}", settings.streams) : "";
  row.algorithm =
      fmt::format("{}:{}:segment={}:window={}{}", settings.blocking ? "blocking_tree" : "tree",
                  trees::describe(settings.shapes), outcome.segment_bytes, settings.window, streams);
  row.chunks = outcome.segments;
  row.streams = outcome.streams;
}

} // namespace commlens::runtime
