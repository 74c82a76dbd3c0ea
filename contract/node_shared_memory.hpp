#pragma once
// POSIX shared memory for the ranks of one node, made collectively. Compiled into both
// libcommlens.so (the runtime channel) and libcommlens_cuda.so (the runtime's engines): the plugin
// cannot call into the core, whose symbols are hidden.
#include "mpi_header.hpp"

#include <cstddef>

namespace commlens::contract {

// Collective over comm (all ranks on one node): rank 0 creates a zeroed POSIX shared-memory
// segment of `bytes`, the others map it; its name is unlinked once all mapped, so nothing outlives
// the job. Null on every rank when any rank failed.
void* map_node_shared_memory(MPI_Comm comm, int rank, std::size_t bytes);

} // namespace commlens::contract
