#pragma once
// Who does what at MPI_Finalize, found with a few collectives on a duplicate of MPI_COMM_WORLD (the
// application may still have receives posted on MPI_COMM_WORLD itself): the ranks of each host,
// which read one CLOCK_MONOTONIC, and among them the ranks that write into one output folder (the
// same device and inode), whose lowest rank leads that folder's part of the merge
// (finalize_merge.hpp).
#include "mpi_header.hpp"

#include <string>

namespace commlens::pmpi {

class FinalizeTopology {
public:
  // Collective over MPI_COMM_WORLD.
  explicit FinalizeTopology(const std::string& output_directory);
  ~FinalizeTopology();
  FinalizeTopology(const FinalizeTopology&) = delete;
  FinalizeTopology& operator=(const FinalizeTopology&) = delete;

  MPI_Comm world() const { return world_; }               // a duplicate of MPI_COMM_WORLD
  MPI_Comm host() const { return host_; }                 // the ranks of this host
  MPI_Comm host_leaders() const { return host_leaders_; } // each host's lowest rank; null elsewhere
  MPI_Comm folder() const { return folder_; }             // this host's ranks writing into this folder
  bool leads_folder() const { return folder_rank_ == 0; }
  int world_rank() const { return world_rank_; }

private:
  MPI_Comm world_ = MPI_COMM_NULL;
  MPI_Comm host_ = MPI_COMM_NULL;
  MPI_Comm host_leaders_ = MPI_COMM_NULL;
  MPI_Comm folder_ = MPI_COMM_NULL;
  int world_rank_ = 0;
  int folder_rank_ = 0;
};

} // namespace commlens::pmpi
