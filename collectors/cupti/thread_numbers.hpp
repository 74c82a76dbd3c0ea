#pragma once
// Which mpi_calls.thread the thread of a CUDA API call has. CUPTI names an API call's thread by its
// Linux thread id; the MPI rows number a rank's threads in the order they first called MPI or NCCL
// (the thread field of every call id). The CUDA collector's call-entry hook notes each thread's
// pair at its first call, so the API calls of a thread that also calls MPI or NCCL carry its
// number. No CUDA here: unit-tested on any machine.
#include <cstdint>
#include <optional>

namespace commlens::cuda {

// At the calling thread's MPI or NCCL call `call_id` (0: a call not recorded): remembers the
// thread's number at its first recorded call; later calls cost one thread-local test.
void note_calling_thread(std::uint64_t call_id) noexcept;

// The number of the thread with this Linux thread id; empty while it has made no recorded MPI or
// NCCL call.
std::optional<std::uint32_t> mpi_thread_of(std::uint32_t system_thread);

} // namespace commlens::cuda
