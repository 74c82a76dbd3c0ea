#pragma once
// What the generated NCCL wrappers need besides pmpi::CallRecording (which stores an NCCL call
// exactly as it stores an MPI call): the NCCL functions' place in the functions table, datatype
// sizes, the thread's group nesting and the registry of NCCL communicators.
//
// NCCL communicators are registered without any MPI or NCCL collective: every member derives the
// same id from what it already holds. ncclCommInitRank(Config): a hash of the ncclUniqueId, which
// all members received. ncclCommSplit: a hash of the parent's id, the split's sequence number on
// the parent (every member splits the parent in the same order) and the color (the key differs per
// member, so it cannot be part of the id). ncclCommInitAll: the process's run rank and its own
// counter (the communicators live in this process only). Ids have bit 62 set, so they never meet
// the MPI communicators' ids (run rank x 2^32 + counter). Rank and size come from NCCL
// (ncclCommUserRank, ncclCommCount); the members, unknown without a collective, are stored as -1
// except this process's own run rank; roots stay ranks of the NCCL communicator, peers become run
// ranks where known (the process itself) and -1 otherwise (nccl_calls keeps the NCCL rank).
#include "call_recording.hpp"
#include "nccl_api.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace commlens::nccl {

// The first FunctionId of the NCCL functions in this run's functions table, 0 until the collector
// started (id 0 is MPI_Init, never an NCCL function): until then the wrappers only pass calls on.
FunctionId first_function_id() noexcept;

// Size in bytes of an ncclDataType_t (0 for a type this build does not know).
std::uint64_t type_size(ncclDataType_t datatype) noexcept;

// Whether the calling thread is inside a wrapped NCCL call: NCCL implements some public functions
// with others (ncclBcast calls ncclBroadcast), and the inner call is not the program's.
bool inside_nccl_call() noexcept;
class NcclCallScope {
public:
  NcclCallScope() noexcept;
  ~NcclCallScope();
  NcclCallScope(const NcclCallScope&) = delete;
  NcclCallScope& operator=(const NcclCallScope&) = delete;
};

// ncclGroupStart/End nesting of the calling thread (NCCL's groups are per thread).
int group_depth() noexcept;
void enter_group() noexcept;
void leave_group() noexcept;

const pmpi::CommunicatorEntry* find_communicator(ncclComm_t comm) noexcept;
// After a successful creating call; each records the new communicator on `call`.
void register_from_unique_id(pmpi::CallRecording& call, ncclComm_t comm, const ncclUniqueId& unique_id);
// The id every member derives from the communicator's unique id.
std::int64_t unique_id_communicator(const ncclUniqueId& unique_id) noexcept;
// A communicator created before the profiler ran (nccl_without_mpi.hpp), registered at its start
// with the id it would have had: the run rank an ncclCommInitAll id needs is known only then.
// A communicator's rank and size as NCCL tells them ({0, 1} for an NCCL without the queries).
struct CommunicatorShape {
  int rank = 0;
  int size = 1;
};
CommunicatorShape communicator_shape(ncclComm_t comm);

struct EarlyCommunicator {
  enum class Origin { UniqueId, Split, All };
  Origin origin = Origin::UniqueId;
  ncclComm_t comm = nullptr;
  std::size_t creator = 0;        // the creating function's index in nccl_function_descriptions()
  std::uint64_t created_ns = 0;   // CLOCK_MONOTONIC
  std::uint64_t destroyed_ns = 0; // CLOCK_MONOTONIC; 0 while it lives
  CommunicatorShape shape{};      // asked before it was destroyed (its handle is gone after)
  std::int64_t unique_id = 0;     // UniqueId: unique_id_communicator()
  std::size_t parent = 0; // Split: the parent's place in the list, its split sequence number, the color
  std::uint32_t sequence = 0;
  int color = 0;
  std::uint32_t splits = 0; // how often it was itself split before the profiler ran
};
// In creation order (a split's parent first), with the parent's id for a split (-1: unknown);
// `created_ns` and `destroyed_ns` on the profiler's clock (destroyed_ns 0: still alive). Returns
// the id it registered, -1 for none.
std::int64_t register_early(Profiler& profiler, const EarlyCommunicator& early, std::int64_t parent_id,
                            std::uint64_t created_ns, std::uint64_t destroyed_ns);
void register_split(pmpi::CallRecording& call, ncclComm_t newcomm, ncclComm_t parent, int color);
void register_all(pmpi::CallRecording& call, const ncclComm_t* comms, int count);
// Before ncclCommDestroy / ncclCommAbort.
void forget_communicator(ncclComm_t comm);

// The NCCL functions, in FunctionId order from first_function_id() (generated).
std::span<const FunctionDescription> nccl_function_descriptions();
// MPI_Init, once the profiler runs: finds the NCCL functions' ids in the run's table.
void start_nccl_collector(Profiler& profiler, std::span<const FunctionDescription> functions);
// MPI_Finalize (or the end of a process without MPI): stores the side tables' buffered rows.
void finish_nccl_collector();

} // namespace commlens::nccl
