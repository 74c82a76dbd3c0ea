#include "collectives/allreduce/ipc_allreduce.hpp"

#include "collectives/allreduce/ipc_stages.hpp"

namespace commlens::runtime {

IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                        IpcAlgorithm algorithm) {
  IpcResult result;
  ipc::PeerBuffers buffers;
  if (!ipc::agree_and_map(engine, cache, args, algorithm, buffers, result)) {
    return result;
  }
  result.ran = true;
  switch (algorithm) {
  case IpcAlgorithm::TwoShot:
    ipc::two_shot(engine, args, buffers, result);
    break;
  case IpcAlgorithm::ReduceToNodeLeader:
    ipc::reduce_to_node_leader(engine, args, buffers, result);
    break;
  case IpcAlgorithm::Tree: // the agreement only: tree_pipeline.cpp runs the rooted collectives
    break;
  case IpcAlgorithm::OneShot:
  case IpcAlgorithm::OneShotStriped:
    ipc::one_shot(engine, args, algorithm, buffers, result);
    break;
  }
  return result;
}

} // namespace commlens::runtime
