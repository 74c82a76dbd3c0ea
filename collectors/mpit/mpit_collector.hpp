#pragma once
// The MPI_T collector's one entry point: started from MPI_Init after the profiler, it stores the
// cvar snapshot and pvar catalogue and fills collector_slot(Collector::Mpit) so that the selected
// pvars are sampled every COMMLENS_PVAR_PERIOD_MS, at the boundaries of COMMLENS_PVAR_CALLS and at
// MPI_Finalize.
#include "commlens/profiler/profiler.hpp"

#include <span>

namespace commlens::mpit {

// thread_level: what MPI_Init(_thread) provided, requested from MPI_T_init_thread too. Samples are
// taken in the application's threads at MPI call exits (no thread of its own); the run table's
// `mpit_sampling` says so, or why nothing is sampled.
void start_mpit_collector(Profiler& profiler, int thread_level,
                          std::span<const FunctionDescription> functions);

} // namespace commlens::mpit
