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
#include "device/reduction_types.hpp"
#include "engine/communicator_engine.hpp"
#include "engine/runtime_records.hpp"
#include "mpi_header.hpp"
#include "transport/host_stripe.hpp"
#include "transport/ipc_handle_cache.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace commlens::runtime {

struct AllreduceArguments {
  const void* sendbuf;
  void* recvbuf;
  int count;
  Reduction reduction;
  HostStripe* stripe = nullptr; // OneShotStriped's host path
  double host_share = 0;        // OneShotStriped: the share of the data the host path carries
  // COMMLENS_RUNTIME_BACKGROUND_OPENS: a rank whose peer buffers are not mapped yet, on a call the
  // host path runs faster than the opens would take, hands the call to the baseline (every rank
  // agrees) and has the handles opened in the background for the next call.
  bool background_opens = false;
  // ReduceToNodeLeader: every rank of the whole communicator votes here after its node agreed,
  // and the node leader runs between_nodes on its output, which the node stages fill and empty.
  MPI_Comm vote = MPI_COMM_NULL;
  std::function<BetweenNodes(void* node_result, const NodeStages& node)> between_nodes = {};
  // Tree (the rooted collectives, collectives/pipeline/): the peers whose input and whose output
  // this rank maps, one bit per rank.
  std::uint32_t tree_inputs = 0;
  std::uint32_t tree_outputs = 0;
  // This rank's datatype is not contiguous (a bcast's datatype may differ between ranks): it
  // declines, and every rank hands the call to the baseline.
  bool non_contiguous = false;
  // A nonblocking call run after its call returned: the buffers' producers are done once this
  // CUDA event (recorded on the legacy default stream at the call) is, and the kernels run on
  // `stream`, so that work the program queued after the call is not waited for. Null: the legacy
  // stream as it is now, and the engine's stream.
  void* ready_event = nullptr;
  void* stream = nullptr;
};

// OneShotStriped (two ranks, large messages): one-shot over NVLink for most of the data while the
// host path (host_stripe.hpp) carries the rest. ReduceToNodeLeader: the node's stages of the
// hierarchical algorithm (reduce into the node leader, its step between nodes, copy out).
// Tree: the agreement only, mapping the peers AllreduceArguments' tree masks name (bcast, reduce).
enum class IpcAlgorithm { OneShot, TwoShot, OneShotStriped, ReduceToNodeLeader, Tree };

struct IpcResult {
  bool ran = false; // false: the ranks agreed to hand the call to the baseline (reason says why)
  int rc = MPI_SUCCESS;
  std::string reason;
  std::uint64_t bytes_peer = 0;
  std::uint64_t bytes_host = 0;
  std::uint32_t ipc_opens = 0;
  std::uint32_t chunks = 1;
};

// The runtime_ops fields of a call the runtime ran that `result` gives (what it moved, opened and
// in how many chunks); the caller adds the implementation, algorithm and streams of its choice.
inline void record_ran(const IpcResult& result, RuntimeOp& row) {
  row.decision = "runtime";
  row.bytes_host = result.bytes_host;
  row.bytes_peer = result.bytes_peer;
  row.ipc_opens = result.ipc_opens;
  row.chunks = result.chunks;
}

// Collective over the engine's communicator; every rank returns the same `ran`. The algorithm must
// be equal on every rank (it is chosen from arguments MPI requires to be equal).
IpcResult ipc_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache, const AllreduceArguments& args,
                        IpcAlgorithm algorithm);

} // namespace commlens::runtime
