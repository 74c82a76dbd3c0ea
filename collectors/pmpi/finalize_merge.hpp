#pragma once
// The merge of a job alone in its run, at MPI_Finalize, as a tree (commlens/profiler/merge_parts.hpp).
// The lowest rank of each output folder (finalize_topology.hpp) merges its folder's rank files
// into a part; the leaders hand parts up a binomial tree, each merging what it received with its
// own, and rank 0 writes commlens.sqlite: log2(folders) rounds, none of them O(ranks) at rank 0.
// A folder that is not rank 0's (rank 0's file, just closed, is not in it; or
// COMMLENS_SHARED_OUTPUT says so) sends its part's files over MPI in bounded chunks; a part in
// rank 0's folder is read where it lies. Once rank 0 says the database holds every rank, each
// leader removes its folder's rank files; otherwise they stay, and rank 0 names where.
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/merge_parts.hpp"
#include "commlens/profiler/profiler.hpp"
#include "finalize_topology.hpp"

namespace commlens::pmpi {

struct TreeMergeJob {
  const Config& config;
  const ProcessIdentity& identity;
  const JobTimeline& timeline;
  const FinalizeTopology& topology;
  bool kept_file; // this rank's file holds its data
};

// Collective over the topology's communicators; rank 0 prints what the database holds.
void merge_job_as_tree(const TreeMergeJob& job);

} // namespace commlens::pmpi
