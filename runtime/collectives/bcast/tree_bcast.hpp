#pragma once
// MPI_Bcast of a contiguous device buffer among the ranks of one node: every rank but the root
// copies each segment from its parent's buffer (mapped through CUDA IPC) into its own as soon as
// the parent announced it (collectives/pipeline/tree_pipeline.hpp). A flat tree has every rank
// copy from the root; a chain or binomial tree spreads the root's reads over the ranks that have
// the data already.
#include "collectives/allreduce/ipc_allreduce.hpp"
#include "collectives/pipeline/tree_pipeline.hpp"

namespace commlens::runtime {

struct TreeOutcome {
  IpcResult result; // ran false: the ranks agreed to hand the call to the baseline
  std::uint32_t segments = 0;
  std::uint64_t segment_bytes = 0;
};

// Collective over the engine's ranks; every rank returns the same `ran`.
// non_contiguous: this rank's datatype is not contiguous (all ranks then agree on the baseline).
TreeOutcome tree_bcast(CommunicatorEngine& engine, IpcHandleCache& cache, void* buffer, std::uint64_t bytes,
                       int root, const TreeSettings& settings, bool non_contiguous);

} // namespace commlens::runtime
