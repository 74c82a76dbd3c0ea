#pragma once
// Allreduce over CUDA IPC for ranks of one node, SM-driven over peer mappings of the users' own
// buffers (no scratch copies):
// - two-shot: reduce-scatter then allgather. Rank r reduces slice r of every rank's input into its
//   own output, then loads every other slice from its owner's output. Each rank moves 2 (P-1)/P of
//   the data over the links, the bus-bandwidth optimum, in two kernels.
// - one-shot (small messages, or two GPUs; not in place unless every rank shares one GPU): the
//   leader of every GPU reduces the whole of every input into the outputs of the ranks on its GPU
//   in one kernel: (P-1) times the data per GPU, but half the launches and barriers, which is what
//   small messages pay for. With one rank per GPU every rank is a leader; ranks sharing a GPU get
//   the shared-buffer (GSB) design of "Design considerations for GPU-aware collective
//   communications in MPI" (Faraji and Afsahi) fused into one kernel (docs/runtime.md).
// - one-shot striped (two ranks, large messages): one-shot over NVLink for most of the data while
//   the host path (host_stripe.hpp) carries the rest.
// - hierarchical: the node's stages (reduce into the node leader, its step between nodes, copy out).
#include "collectives/ipc_call.hpp"
#include "tuning_table.hpp"

namespace commlens::runtime {

// Collective over the engine's communicator; every rank returns the same `ran`. The algorithm must
// be equal on every rank (it is chosen from arguments MPI requires to be equal).
IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const IpcArguments& args,
                        tuning::AllreduceAlgorithm algorithm);

} // namespace commlens::runtime
