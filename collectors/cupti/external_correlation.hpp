#pragma once
// External correlation: the id of the MPI or NCCL call pushed on wrapper entry (kind CUSTOM0) and
// the ipc-copy marker pushed by the memcpy callback (kind CUSTOM1). CUPTI reports, per CUDA API
// call made while one is pushed, a record linking the API's correlation id to it; CorrelationTable
// (correlation_table.hpp) keeps those links for the records that arrive in the same or a later buffer.
#include "correlation_table.hpp"

#include <cstdint>

namespace commlens::cuda {

void push_mpi_call(std::uint64_t call_id) noexcept;
void pop_mpi_call() noexcept;
bool push_ipc_copy_marker() noexcept;
void pop_ipc_copy_marker() noexcept;

} // namespace commlens::cuda
