#include "collectives/allreduce/ipc_allreduce.hpp"

#include "collectives/allreduce/ipc_stages.hpp"

#include <algorithm>

namespace commlens::runtime {

namespace {

using tuning::AllreduceAlgorithm;

// Whose buffers this rank maps for an algorithm: one-shot needs only the GPU leaders to see
// buffers (every input, and the outputs of the ranks on the leader's GPU); the hierarchical algorithm has
// the node leader load every input and every other rank load the leader's output; two-shot has
// every rank load every input and output.
bool maps_input(const CommunicatorEngine& engine, AllreduceAlgorithm algorithm) {
  switch (algorithm) {
  case AllreduceAlgorithm::TwoShot:
    return true;
  case AllreduceAlgorithm::Hierarchical:
    return engine.rank() == 0;
  default:
    return engine.leads_my_gpu();
  }
}

bool maps_output(const CommunicatorEngine& engine, AllreduceAlgorithm algorithm, int peer) {
  switch (algorithm) {
  case AllreduceAlgorithm::TwoShot:
    return true;
  case AllreduceAlgorithm::Hierarchical:
    return engine.rank() != 0 && peer == 0;
  default:
    return engine.leads_my_gpu() &&
           std::ranges::find(engine.ranks_on_my_gpu(), peer) != engine.ranks_on_my_gpu().end();
  }
}

} // namespace

IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const IpcArguments& args,
                        AllreduceAlgorithm algorithm) {
  std::uint32_t inputs = 0;
  std::uint32_t outputs = 0;
  for (int peer = 0; peer < engine.size(); ++peer) {
    inputs |= maps_input(engine, algorithm) ? 1U << peer : 0U;
    outputs |= maps_output(engine, algorithm, peer) ? 1U << peer : 0U;
  }
  IpcResult result;
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, args, inputs, outputs, buffers, result)) {
    return result;
  }
  result.ran = true;
  switch (algorithm) {
  case AllreduceAlgorithm::TwoShot:
    ipc::two_shot(engine, args, buffers, result);
    break;
  case AllreduceAlgorithm::Hierarchical:
    ipc::reduce_to_node_leader(engine, args, buffers, result);
    break;
  case AllreduceAlgorithm::OneShot:
  case AllreduceAlgorithm::OneShotStriped:
    ipc::one_shot(engine, args, algorithm, buffers, result);
    break;
  }
  return result;
}

} // namespace commlens::runtime
