#pragma once
// What every collective over CUDA IPC is called with and returns (the allreduce, the trees of bcast
// and reduce, and the nonblocking calls on their lanes), and the agreement on the buffers that the
// allreduce and the trees start with (agreement.hpp has the agreement itself).
#include "collectives/agreement.hpp"
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

struct IpcArguments {
  const void* sendbuf;
  void* recvbuf;
  int count;
  Reduction reduction;
  HostStripe* stripe = nullptr; // the allreduce's OneShotStriped: its host path
  double host_share = 0;        // OneShotStriped: the share of the data the host path carries
  // COMMLENS_RUNTIME_BACKGROUND_OPENS: a rank whose peer buffers are not mapped yet, on a call the
  // host path runs faster than the opens would take, hands the call to the baseline (every rank
  // agrees) and has the handles opened in the background for the next call.
  bool background_opens = false;
  // Hierarchical: every rank of the whole communicator votes here after its node agreed,
  // and the node leader runs between_nodes on its output, which the node stages fill and empty.
  MPI_Comm vote = MPI_COMM_NULL;
  std::function<BetweenNodes(void* node_result, const NodeStages& node)> between_nodes = {};
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

namespace ipc {

// The agreement (agreement.hpp) for a call of `args`: every rank publishes its input (recvbuf in
// place) and output, and maps the inputs and outputs of the peers the masks name (bit p: rank p).
// The allreduce derives the masks from its algorithm; the trees pass their parents and children.
// With `vote` (ranks on other nodes: the hierarchical algorithm) every rank of the whole
// communicator then votes, so all nodes go the same way. Returns whether the call runs here; on
// false result.reason says why.
bool agree_and_map(CommunicatorEngine& engine, IpcHandleCache& cache, const IpcArguments& args,
                   std::uint32_t inputs_needed, std::uint32_t outputs_needed, PeerBuffers& buffers,
                   IpcResult& result);

} // namespace ipc

} // namespace commlens::runtime
