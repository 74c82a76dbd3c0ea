#include "point_to_point/completed_request.hpp"

namespace commlens::runtime {

namespace {

int report_status(void* state, MPI_Status* status) {
  *status = *static_cast<const MPI_Status*>(state);
  return status->MPI_ERROR;
}

int free_state(void* state) {
  delete static_cast<MPI_Status*>(state);
  return MPI_SUCCESS;
}

int cancel_nothing(void* /*state*/, int /*complete*/) {
  return MPI_SUCCESS; // complete already: MPI_Test_cancelled says false
}

} // namespace

int completed_request(const MPI_Status& status, MPI_Request* request) {
  auto* state = new MPI_Status(status);
  const int rc = PMPI_Grequest_start(report_status, free_state, cancel_nothing, state, request);
  if (rc != MPI_SUCCESS) {
    delete state;
    return rc;
  }
  return PMPI_Grequest_complete(*request);
}

} // namespace commlens::runtime
