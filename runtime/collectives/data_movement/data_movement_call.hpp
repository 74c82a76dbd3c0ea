#pragma once
// What every data-movement entry (data_movement_entries.cpp) shares: the decision (runtime, the
// baseline's turn in ab mode, or a fallback with its reason), the algorithm from the tuning table,
// the run over CUDA IPC or the host-staged baseline, and one runtime_ops row. An entry only says
// what its call is (a MovementCall) and how MPI runs it on staged buffers (its baseline).
#include "collectives/data_movement/ipc_data_movement.hpp"
#include "collectives/data_movement/staged_baseline.hpp"
#include "commlens/profiler/event_record.hpp"
#include "data_movement_rules.hpp"
#include "engine/runtime_records.hpp"
#include "mpi_header.hpp"
#include "selector.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace commlens::runtime {

struct MovementCall {
  FunctionId function = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  movement::CallGeometry geometry;    // ranks: filled in from the communicator
  const void* input = nullptr;        // this rank's input as block_plan.hpp means it (null: none)
  void* output = nullptr;             // this rank's output (null: none)
  std::uint64_t bytes = 0;            // runtime_ops.bytes: the bytes this rank sends
  std::optional<Reduction> reduction; // reduce_scatter: empty when no kernel reduces the pair
  // Why the runtime cannot take the call, from arguments equal on every rank (null: it can).
  const char* unsupported = nullptr;
  // This rank's own arguments rule the runtime out (the ranks agree on it before running).
  bool arguments_declined = false;
};

// Runs the call (the runtime, or baseline(staged buffers) where the runtime does not), records it
// and returns the MPI return code; *implementation gets what ran (an implementations id).
int run_movement_call(MovementCall& call, std::uint64_t call_id, std::uint8_t* implementation,
                      const std::function<int(StagedBuffers&)>& baseline) noexcept;

// What the calls are, for their blocking entries and their nonblocking ones (nonblocking_entries.cpp);
// `function` names the runtime_ops row. The arrays and buffers stay the caller's.
MovementCall allgather_call(FunctionId function, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
MovementCall reduce_scatter_block_call(FunctionId function, const void* sendbuf, void* recvbuf, int recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
MovementCall reduce_scatter_call(FunctionId function, const void* sendbuf, void* recvbuf,
                                 const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

// Why the runtime declines the call before any agreement (every rank finds the same), or null.
const char* movement_declined(CommunicatorEngine& engine, const MovementCall& call);
// What the selection chooses the call's algorithm by; `on_lane`: a nonblocking call.
selection::CallShape movement_shape(const MovementCall& call, bool on_lane) noexcept;
// The IPC algorithms' arguments for the call (buffers, geometry, reduction); a blocking call adds
// its background opens, a nonblocking one its lane's event and stream.
MovementArguments movement_arguments(const MovementCall& call) noexcept;

// The ranks a buffer holds a block for: the communicator's, the remote group's for an
// inter-communicator (which the runtime leaves to the baseline, whose staging must still fit).
int movement_group_size(MPI_Comm comm);

} // namespace commlens::runtime
