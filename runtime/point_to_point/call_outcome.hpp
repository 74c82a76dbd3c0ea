#pragma once
// What every device point-to-point call does with its outcome (point_to_point.cpp, send_path.cpp,
// receive_path.cpp): the implementation id it reports, and errors the runtime itself finds.
#include "engine/runtime_records.hpp"
#include "mpi_header.hpp"

#include <cstdint>

namespace commlens::runtime {

inline std::uint8_t implementation_id(Implementation implementation) {
  return static_cast<std::uint8_t>(implementation);
}

// An error the runtime itself finds (no pinned memory, a failed copy, a truncated rendezvous) goes
// to the communicator's error handler, as MPI's own errors do: fatal unless the program chose
// MPI_ERRORS_RETURN.
inline int report_error(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS) {
    PMPI_Comm_call_errhandler(comm, rc);
  }
  return rc;
}

} // namespace commlens::runtime
