#pragma once
// The MPI_T collector's entry points: MPI_T is initialised just before PMPI_Init (docs/design.md
// says why), and the collector is started from MPI_Init after the profiler: it stores the cvar
// snapshot and pvar catalogue and fills collector_slot(Collector::Mpit) so that the selected pvars
// are sampled every COMMLENS_PVAR_PERIOD_MS, at the boundaries of COMMLENS_PVAR_CALLS and at
// MPI_Finalize.
#include "commlens/profiler/profiler.hpp"

#include <span>

namespace commlens::mpit {

// Calls MPI_T_init_thread(required_level) when COMMLENS_COLLECTORS keeps pmpi and mpit. Open MPI
// 4.1 registers every framework's components there (dlopen); before PMPI_Init they stay loaded
// for it, after PMPI_Init the ones it closed are loaded again (about 200 ms per rank on Debian 12,
// whose PSM libraries sleep in their constructors).
void initialise_mpit_before_mpi(int required_level);
// Balances that MPI_T_init_thread when the profiler does not start after all.
void release_mpit_without_collector();

// Uses the MPI_T that initialise_mpit_before_mpi opened; its time is the `mpit_init` overhead row.
// Samples are taken in the application's threads at MPI call exits (no thread of its own); the
// run table's `mpit_sampling` says so, or why nothing is sampled.
void start_mpit_collector(Profiler& profiler, std::span<const FunctionDescription> functions);

} // namespace commlens::mpit
