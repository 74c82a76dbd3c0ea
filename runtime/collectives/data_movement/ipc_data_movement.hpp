#pragma once
// The data-movement collectives over CUDA IPC for ranks of one node (block_plan.hpp says which
// block goes where): after the agreement (collectives/allreduce/agreement.hpp) every rank pulls
// what its output receives straight from the peers' mapped buffers, with no scratch copies, or,
// with gpu_leader, one rank on each GPU (data_movement_rules.hpp says which) does so for every rank
// on its GPU while the others wait for it at the closing barrier. Reductions
// (reduce_scatter) load the rank's slice of every input and reduce it in one kernel (one-shot).
#include "collectives/allreduce/ipc_allreduce.hpp"
#include "device/block_plan.hpp"
#include "device/reduction_types.hpp"

namespace commlens::runtime {

struct MovementArguments {
  movement::CallGeometry geometry;
  const void* input = nullptr;     // this rank's input as block_plan.hpp means it (null: none)
  void* output = nullptr;          // this rank's output (null: none)
  Reduction reduction{};           // reduce_scatter
  bool arguments_declined = false; // this rank's own arguments rule the runtime out
  bool background_opens = false;
  // A nonblocking call: as IpcArguments' (collectives/ipc_call.hpp).
  void* ready_event = nullptr;
  void* stream = nullptr;
};

// Collective over the engine's communicator (one node); every rank returns the same `ran`. The
// algorithm must be equal on every rank, and not staged (the caller runs that baseline itself).
IpcResult ipc_data_movement(CommunicatorEngine& engine, IpcHandleCache& cache, const MovementArguments& args,
                            tuning::MovementAlgorithm algorithm);

} // namespace commlens::runtime
