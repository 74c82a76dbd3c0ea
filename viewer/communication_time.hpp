#pragma once
// Time in communication as the summary gives it: MPI calls and NCCL calls apart, and of each the
// set-up (MPI_Init and MPI_Finalize, communicator creation, NCCL's communicator initialisation:
// LoadedDatabase::is_setup_function), as summed call times. A PyTorch job under torchrun never
// initialises MPI and spends seconds in NCCL's set-up; neither is training communication.
#include "loaded_database.hpp"

#include <map>

namespace commlens::viewer {

struct CommunicationTime {
  std::int64_t mpi_ns = 0;
  std::int64_t mpi_setup_ns = 0; // part of mpi_ns
  std::int64_t nccl_ns = 0;
  std::int64_t nccl_setup_ns = 0; // part of nccl_ns
  std::uint64_t mpi_calls = 0;
  std::uint64_t nccl_calls = 0;
  // Whole run, with training steps: the MPI and NCCL calls' time inside the steps, and their number.
  std::int64_t steps_ns = 0;
  int steps = 0;
  std::int64_t setup_ns() const { return mpi_setup_ns + nccl_setup_ns; }
};

// Over every rank (the report's functions).
CommunicationTime run_communication_time(const LoadedDatabase& database);
// Per rank (the summary's per-rank function times).
std::map<int, CommunicationTime> rank_communication_times(const LoadedDatabase& database);
// "MPI 1.2 s (set-up 310 ms) · NCCL 4.45 s (set-up 3.9 s) · in the 10 training steps 65 ms"; "no MPI
// calls" where there were none, the NCCL part only where there were NCCL calls.
QString communication_text(const CommunicationTime& time);

} // namespace commlens::viewer
