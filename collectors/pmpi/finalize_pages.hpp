#pragma once
// At MPI_Finalize, once the rank files are closed: the job's ranks encode their own trace rows'
// pages and timeline tiles in parallel (commlens/profiler/trace_pages.hpp), agreeing first, by
// PMPI collectives on MPI_COMM_WORLD, on rank 0's clock origin and on the tile widths the merge
// will choose from every rank's calls and span.
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/profiler.hpp"

#include <string>

namespace commlens::pmpi {

// Collective over MPI_COMM_WORLD where it runs at all: every rank of the job decides alike (the
// same settings, and whether the job's ranks are the run's first, whose rank 0 sets the
// timeline's origin), then rank 0 for all (whether it can encode, and whether the run is this job
// alone: a run with spawned jobs is left to the merge). `rank_file`: this rank's file, when it
// kept one.
void encode_trace_pages_at_finalize(const Config& config, const ProcessIdentity& identity,
                                    const std::string& rank_file, bool kept_file);

} // namespace commlens::pmpi
