#include "external_correlation.hpp"

#include <cupti.h>

namespace commlens::cuda {

namespace {
constexpr auto kMpiCallKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
constexpr auto kIpcCopyKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
} // namespace

// The hot path (every MPI call): return codes are not checked here; push/pop only fail when CUPTI
// is not initialised, which plugin start-up already reported.
void push_mpi_call(std::uint64_t call_id) noexcept {
  cuptiActivityPushExternalCorrelationId(kMpiCallKind, call_id);
}

void pop_mpi_call() noexcept {
  std::uint64_t popped = 0;
  cuptiActivityPopExternalCorrelationId(kMpiCallKind, &popped);
}

bool push_ipc_copy_marker() noexcept {
  return cuptiActivityPushExternalCorrelationId(kIpcCopyKind, 1) == CUPTI_SUCCESS;
}

void pop_ipc_copy_marker() noexcept {
  std::uint64_t popped = 0;
  cuptiActivityPopExternalCorrelationId(kIpcCopyKind, &popped);
}

} // namespace commlens::cuda
