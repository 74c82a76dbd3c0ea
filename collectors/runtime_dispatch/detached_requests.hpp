#pragma once
// Requests the program freed with MPI_Request_free while the runtime or the host staging still had
// work under them: a device receive to copy back, a pinned image MPI still reads or writes. MPI
// completes such an operation later, unseen by the program. The wrappers keep the request instead
// of freeing it, test it at later wait, test and free calls, and finish it as a wait would (then
// free it, if persistent), so no image is held longer than MPI needs it and none is released
// while MPI may still use it.
#include "mpi_header.hpp"

#include <atomic>

namespace commlens::pmpi::detached_requests {

// MPI_Request_free: keeps the request when something still depends on its completion; then
// *request is MPI_REQUEST_NULL and the free is done. False: the caller frees it.
bool detach(MPI_Request* request) noexcept;
// Whether some are kept. Every wait, test and free call asks, so the question is an inline load.
extern std::atomic<bool> kept_any;
inline bool any() noexcept {
  return kept_any.load(std::memory_order_relaxed);
}
// Tests the kept requests and finishes those MPI completed.
void progress() noexcept;
// MPI_Finalize: waits for every kept request and finishes it.
void finish_all() noexcept;

} // namespace commlens::pmpi::detached_requests
