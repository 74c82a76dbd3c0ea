#pragma once
// Allreduce over CUDA IPC for ranks of one node: reduce-scatter then allgather, both SM-driven
// over peer mappings of the users' own buffers (no scratch copies). Rank r reduces slice r of
// every rank's input into its own output, then loads every other slice from its owner's output.
// Each rank moves 2 (P-1)/P of the data over the links, the bus-bandwidth optimum, in two
// kernel launches and a handful of shared-memory barriers.
#include "communicator_engine.hpp"
#include "ipc_handle_cache.hpp"
#include "mpi_header.hpp"
#include "reduction_types.hpp"

#include <cstdint>
#include <string>

namespace commlens::runtime {

struct AllreduceArguments {
  const void* sendbuf;
  void* recvbuf;
  int count;
  Reduction reduction;
};

struct TwoShotResult {
  bool ran = false; // false: the ranks agreed to hand the call to the baseline (reason says why)
  int rc = MPI_SUCCESS;
  std::string reason;
  std::uint64_t bytes_peer = 0;
  std::uint32_t ipc_opens = 0;
};

// Collective over the engine's communicator; every rank returns the same `ran`.
TwoShotResult two_shot_allreduce(CommunicatorEngine& engine, IpcHandleCache& cache,
                                 const AllreduceArguments& args);

} // namespace commlens::runtime
