#pragma once
// MPI_Bcast of a contiguous device buffer among the ranks of one node: every rank but the root
// copies each segment from its parent's buffer (mapped through CUDA IPC) into its own as soon as
// the parent announced it (collectives/pipeline/tree_pipeline.hpp). A flat tree has every rank
// copy from the root; a chain or binomial tree spreads the root's reads over the ranks that have
// the data already. With `push` the parent copies each segment into its children's buffers instead,
// and a leaf only waits for its parent: on a GPU that ranks time-share without MPS one context then
// does the copies, where pulling costs a time slice for every child.
#include "collectives/pipeline/tree_pipeline.hpp"

namespace commlens::runtime {

// Where a nonblocking call's bcast runs off the calling thread (MPI_Ibcast on its lane): the
// buffer's producers are done once `ready_event` is (null: the legacy default stream as it is
// now), and the copies are queued on `stream` (null: the engine's) and, with several streams, on
// `more_streams` (null: the engine's).
struct LaneStreams {
  void* ready_event = nullptr;
  void* stream = nullptr;
  StreamSet* more_streams = nullptr;
};

// Collective over the engine's ranks; every rank returns the same `ran`.
// non_contiguous: this rank's datatype is not contiguous (all ranks then agree on the baseline).
TreeOutcome tree_bcast(CommunicatorEngine& engine, IpcHandleCache& cache, void* buffer, std::uint64_t bytes,
                       int root, const TreeSettings& settings, bool non_contiguous, LaneStreams lane = {});

} // namespace commlens::runtime
