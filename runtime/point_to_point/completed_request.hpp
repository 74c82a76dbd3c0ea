#pragma once
// A request that is complete from the start, for a nonblocking receive the runtime finished inside
// the call that posted it (a message a probe had received already, probed_messages.hpp). MPI's
// generalized requests let every wait and test call complete it and report its status as for any
// other request.
#include "mpi_header.hpp"

namespace commlens::runtime {

// *request completes with `status` (its MPI_ERROR is what a wait on it returns).
int completed_request(const MPI_Status& status, MPI_Request* request);

} // namespace commlens::runtime
