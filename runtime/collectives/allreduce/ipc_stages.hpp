#pragma once
// The stages of the IPC allreduce (ipc_allreduce.cpp runs them after the agreement, ipc_call.hpp):
// one-shot (one_shot.cpp), two-shot (two_shot.cpp) or the node's part of the hierarchical
// algorithm (hierarchical.cpp).
#include "collectives/allreduce/ipc_allreduce.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace commlens::runtime::ipc {

// Each GPU's leader reduces every input, whole, into the outputs of the ranks on its GPU in one
// kernel (with one rank per GPU: every rank into its own output); the other ranks only wait. Ranks
// sharing a GPU thus load each input once instead of once per rank, and one process's kernel runs
// instead of a time slice per process. In place is safe only when a single leader reads and
// writes (one GPU). Striped: the NVLink kernel takes the first part, the host path the rest, at
// the same time.
void one_shot(CommunicatorEngine& engine, const IpcArguments& args, tuning::AllreduceAlgorithm algorithm,
              const PeerBuffers& buffers, IpcResult& result);

// Reduce-scatter (this rank's slice of every input into its own output), then allgather (every
// other slice from its owner's final output).
void two_shot(CommunicatorEngine& engine, const IpcArguments& args, const PeerBuffers& buffers,
              IpcResult& result);

// The node's part of the hierarchical algorithm, pipelined in the chunks of the step between
// nodes: the node leader (rank 0) reduces a chunk of every input of the node into its own output
// just before the chunk goes between nodes (args.between_nodes), and announces each chunk once the
// final result is back in its output; every other rank copies announced chunks out meanwhile. In
// place is safe: the leader reads and writes each element in one kernel, and the others overwrite
// a chunk of their buffers only after the leader has reduced it.
void reduce_to_node_leader(CommunicatorEngine& engine, const IpcArguments& args, const PeerBuffers& buffers,
                           IpcResult& result);

// Slice boundaries in elements, rounded to 16-byte packs so every slice keeps vector alignment.
inline std::size_t whole_packs(std::size_t elements, std::size_t element_bytes) {
  const std::size_t per_pack = 16 / element_bytes;
  return elements / per_pack * per_pack;
}

inline int synchronise(int error, void* stream) {
  return error != 0 ? error : static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

} // namespace commlens::runtime::ipc
