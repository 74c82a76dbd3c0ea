#pragma once
// What a nonblocking collective's job runs when the ranks' agreement declines the runtime's
// algorithms in it (a host or managed buffer on some rank, an unaligned buffer, a failed IPC
// open): the call itself, through the communicator's stages in node shared memory
// (transport/shared_memory_collectives.hpp), on the lane, without MPI. A baseline posted through
// MPI by the calling thread would wait for that thread's next MPI call, and a rank already blocked
// in MPI until a peer's wait for this call returns would never make one.
#include "engine/communicator_engine.hpp"
#include "engine/runtime_records.hpp"
#include "nonblocking/nonblocking_collectives.hpp"
#include "nonblocking/ordered_lanes.hpp"
#include "transport/shared_memory_collectives.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace commlens::runtime {

using SharedMemoryCollective = std::function<SharedMemoryResult(const StageContext& context)>;

// Runs `collective` on every rank of the engine's communicator (each rank's job calls this after
// the same declined agreement, so the barriers agree), with copies on the lane's stream once the
// call's inputs are ready. Fills the row: decision fallback, `reason` (the agreement's), the
// implementation runtime:node_shared_memory; returns MPI_ERR_OTHER on every rank where some
// rank's copy failed. Where some rank could not describe its buffers (a datatype the runtime
// cannot decode into runs), every rank's job declines, and the calling thread posts the baseline.
nonblocking::Outcome run_through_shared_memory(CommunicatorEngine& engine,
                                               const NonblockingCollectives::Lane& lane, std::string reason,
                                               RuntimeOp& row, const SharedMemoryCollective& collective);

// (count, datatype)'s runs for a fallback to copy the message run by run: empty when contiguous,
// nullopt when they cannot be decoded (or are more than 2^20). Calls MPI: the calling thread
// decodes them at the call, for a job that may never need them; contiguous ones cost nothing.
std::optional<std::vector<ByteRun>> fallback_runs(int count, MPI_Datatype datatype);

} // namespace commlens::runtime
