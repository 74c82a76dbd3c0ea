#pragma once
// MPI_Reduce of device buffers among the ranks of one node, up a tree: every rank with children
// reduces, segment by segment, its own input and its children's partial results (their inputs,
// or for children with children of their own their partial results, mapped through CUDA IPC)
// into its partial result: the root's receive buffer, or on any other rank a pooled device buffer
// (exported like the users' buffers). A leaf's partial result is its input. Each segment starts
// when every child announced it (collectives/pipeline/tree_pipeline.hpp). Elements are combined in
// one order on every call (own input first, then the children in the tree's order), so results are
// repeatable.
#include "collectives/bcast/tree_bcast.hpp"
#include "transport/buffer_pool.hpp"

namespace commlens::runtime {

// Collective over the engine's ranks; every rank returns the same `ran`. sendbuf may be
// MPI_IN_PLACE on the root (its input is then recvbuf); recvbuf matters on the root only.
TreeOutcome tree_reduce(CommunicatorEngine& engine, IpcHandleCache& cache, BufferPool& scratch,
                        const void* sendbuf, void* recvbuf, int count, Reduction reduction, int root,
                        const TreeSettings& settings);

} // namespace commlens::runtime
