#pragma once
// At MPI_Finalize, once the rank files are closed: the job agrees on the timeline its merged file
// will have (rank 0's clock origin, and the tile widths the merge chooses from every rank's calls
// and span, summed by one reduction), and its ranks encode their own trace rows' pages and
// timeline tiles in parallel for it (commlens/profiler/trace_pages.hpp). PMPI collectives on the
// finalize's duplicate of MPI_COMM_WORLD.
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/merge_parts.hpp"
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"

#include <string>

namespace commlens::pmpi {

struct JobAgreement {
  // The job merges as a tree (merge_parts.hpp): it is alone in its run, rank 0 kept its file, and
  // the merge at MPI_Finalize is on. Else the merge (if any) takes the rank files in one process.
  bool merge_as_tree = false;
  JobTimeline timeline;
};

// Collective over comm where it runs at all: every rank of the job decides alike (the same
// settings, and whether the job's ranks are the run's first, whose rank 0 sets the timeline's
// origin), then rank 0 for all (whether it has its file, and whether the run is this job alone: a
// run with spawned jobs is left to the one-process merge). `rank_file`: this rank's file, when it
// kept one.
JobAgreement agree_on_timeline_and_encode_pages(MPI_Comm comm, const Config& config,
                                                const ProcessIdentity& identity, const std::string& rank_file,
                                                bool kept_file);

} // namespace commlens::pmpi
