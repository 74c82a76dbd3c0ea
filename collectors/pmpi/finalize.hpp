#pragma once
// What lifecycle.cpp's MPI_Finalize and finalize.cpp share.
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"

#include <cstdint>

namespace commlens::pmpi {

// MPI_Init, MPI_Finalize and MPI_Abort, timed where the collectors cannot take part (call_recording.hpp).
// Init and finalize are collective over MPI_COMM_WORLD, so reports place their time there.
void record_lifecycle_call(Profiler& profiler, FunctionId function, MPI_Comm comm, std::uint64_t start_ticks,
                           std::uint64_t end_ticks);

// MPI_Finalize's part before PMPI_Finalize (finalize.cpp): every communicator it makes is freed
// when it returns.
void finish_profiling(Profiler* profiler);

// The run's merge in one process, as its last job's rank 0 does (finalize.cpp): every rank file of
// the output folder, whichever job wrote it; says what the database holds.
void merge_run_in_one_process(const Config& config);

} // namespace commlens::pmpi
