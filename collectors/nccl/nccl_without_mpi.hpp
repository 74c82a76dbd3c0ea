#pragma once
// NCCL used before MPI_Init, or in a process that never initialises MPI (a PyTorch job started by
// torchrun, a plain NCCL program) with libcommlens.so preloaded.
//
// - No MPI launcher started the process (none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set):
//   the first NCCL call starts the profiler itself. The process's rank is $RANK (torchrun, PyTorch's
//   launchers) or 0, the run's size $WORLD_SIZE or 1; the collectors that need no MPI start with it
//   (NCCL, CUDA; the GPU runtime stays off), and the profiler stops at exit. A run of one process
//   merges its file then; with several, `commlens merge` merges their rank files afterwards.
// - An MPI launcher started it: MPI_Init is expected and starts the profiler as usual. Until then
//   calls pass through and are counted (run key nccl_calls_before_mpi_init), and the communicators
//   they create (from a unique id, by ncclCommSplit, by ncclCommInitAll) are remembered and
//   registered at MPI_Init with the ids they would have had, so later calls on them name them;
//   those destroyed before are registered as created and freed, so their splits keep their parent.
//   A process that never calls MPI_Init says at exit how many calls went unrecorded, unless
//   COMMLENS_START_AT_NCCL=1, with which the first case applies with the launcher's rank and size
//   (whether MPI_Init will come cannot be known at the first NCCL call).
#include "nccl_api.hpp"

#include "commlens/profiler/profiler.hpp"

#include <cstddef>

namespace commlens::nccl {

// The profiler to record an NCCL call with: the running one, else one this call starts (first
// case above), else null (the call passes through).
Profiler* profiler_for_nccl() noexcept;

// Before the profiler runs: the pass-through calls (counted), and the communicators they create.
void note_call_before_profiler() noexcept;
// `creator`: the creating function's index in nccl_function_descriptions().
void remember_early_from_unique_id(ncclComm_t comm, const ncclUniqueId& unique_id,
                                   std::size_t creator) noexcept;
// Every member of the parent calls it, also one that gets no communicator (newcomm null).
void remember_early_split(ncclComm_t newcomm, ncclComm_t parent, int color, std::size_t creator) noexcept;
void remember_early_all(const ncclComm_t* comms, int count, std::size_t creator) noexcept;
void forget_early_communicator(ncclComm_t comm) noexcept;
// MPI_Init: registers the remembered communicators and stores the count.
void adopt_early_communicators(Profiler& profiler);

} // namespace commlens::nccl
