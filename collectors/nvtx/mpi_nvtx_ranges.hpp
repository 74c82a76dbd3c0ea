#pragma once
// One NVTX range per MPI call in an "MPI" domain, so Nsight Systems users see commlens' view of
// the MPI calls on their timeline. The range opens before the PMPI call, when the byte count is not
// known yet, so its payload is the call's mpi_calls.id (join it to the commlens database for bytes)
// and its message is the function name, registered once per function. With no NVTX tool attached
// a push or pop is one call through a null-tool stub (measured in docs/performance.md).
#include "commlens/profiler/event_record.hpp"
#include "commlens/profiler/profiler.hpp"

#include <cstdint>
#include <vector>

namespace commlens::nvtx {

void start_mpi_ranges(const std::vector<FunctionDescription>& functions);
void push_mpi_range(FunctionId function, std::uint64_t call_id) noexcept;
void pop_mpi_range() noexcept;

} // namespace commlens::nvtx
