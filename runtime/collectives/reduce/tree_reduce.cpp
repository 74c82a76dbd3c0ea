#include "collectives/reduce/tree_reduce.hpp"

#include "collectives/ipc_call.hpp"

#include <vector>

namespace commlens::runtime {

TreeOutcome tree_reduce(CommunicatorEngine& engine, IpcHandleCache& cache, BufferPool& scratch,
                        const void* sendbuf, void* recvbuf, int count, Reduction reduction, int root,
                        const TreeSettings& settings) {
  const trees::Tree tree = engine_tree(engine, root, settings.shapes);
  const int me = engine.rank();
  const std::vector<int>& children = tree.children[me];
  const std::size_t element_bytes = element_size(reduction.type);
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * element_bytes;
  // Where this rank's partial result goes: the root's output, a pooled buffer on inner ranks, the
  // input itself on leaves. A failed allocation publishes no device buffer: every rank then
  // agrees to hand the call to the baseline.
  PooledBuffer partial;
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  void* output = recvbuf;
  if (me != root) {
    if (!children.empty()) {
      partial = scratch.acquire(bytes);
    }
    output = children.empty() ? const_cast<void*>(input) : partial.data();
  }
  const IpcArguments args{.sendbuf = sendbuf,
                          .recvbuf = output,
                          .count = count,
                          .reduction = reduction,
                          .background_opens = settings.background_opens};
  // A leaf child's input is its contribution; an inner child's output holds its partial result.
  std::uint32_t inputs = 0;
  std::uint32_t outputs = 0;
  for (const int child : children) {
    (tree.is_leaf(child) ? inputs : outputs) |= 1U << child;
  }
  TreeOutcome outcome;
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, args, inputs, outputs, buffers, outcome.result)) {
    return outcome;
  }
  outcome.result.ran = true;
  const trees::SegmentPlan plan(bytes, element_bytes, settings.segment_bytes);
  outcome.segments = plan.count();
  outcome.segment_bytes = plan.segment_bytes();
  // Per segment: own input, then each child's partial result, into this rank's partial result.
  std::vector<const char*> partials{static_cast<const char*>(input)};
  for (const int child : children) {
    partials.push_back(
        static_cast<const char*>(tree.is_leaf(child) ? buffers.inputs[child] : buffers.outputs[child]));
  }
  const int parent = tree.parent[me];
  const std::span<const int> reader(&tree.parent[me], parent >= 0 ? 1 : 0);
  const PipelineResult pipeline = run_pipeline(
      engine,
      {.segments = plan,
       .window = settings.window,
       .blocking = settings.blocking,
       .upstream = children,
       .readers = reader,
       .has_work = !children.empty(),
       .noise = settings.noise,
       .streams = settings.streams},
      [&](std::uint32_t index, void* stream) {
        const trees::Segment segment = plan.segment(index);
        SourceList sources{};
        sources.count = static_cast<int>(partials.size());
        for (std::size_t i = 0; i < partials.size(); ++i) {
          sources.pointers[i] = partials[i] + segment.offset;
        }
        DestinationList destination{};
        destination.count = 1;
        destination.pointers[0] = static_cast<char*>(output) + segment.offset;
        return launch_reduce(reduction, sources, destination, segment.bytes / element_bytes, stream);
      });
  outcome.result.bytes_peer = (partials.size() - 1) * bytes;
  outcome.result.chunks = plan.count();
  outcome.result.rc = pipeline.error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  outcome.streams = pipeline.streams;
  return outcome;
}

} // namespace commlens::runtime
