#pragma once
// What the plugin's parts share: the host table the core passed in, this thread's MPI call, and
// the one place CUPTI/CUDA return codes are checked and reported.
#include "cuda_plugin_interface.hpp"

#include <cstdint>
#include <string>

namespace commlens::cuda {

const contract::CudaPluginHost& host() noexcept;
void set_host(const contract::CudaPluginHost& host);

// mpi_calls.id of the MPI call this thread is inside, 0 outside any.
std::uint64_t current_mpi_call() noexcept;
void set_current_mpi_call(std::uint64_t call_id) noexcept;

// Nanoseconds since MPI_Init for a time on the profiler's clock (what rows store).
inline std::int64_t relative_ns(std::uint64_t profiler_ns) noexcept {
  return static_cast<std::int64_t>(profiler_ns) - static_cast<std::int64_t>(host().init_ns);
}

// Checks a CUPTI call made at the collector's boundary; the first failure of each call site is
// printed once (rank 0 only) and false returned. `what` names the call.
bool cupti_ok(int result, const char* what);

// Whatever went wrong first, for the run table; empty when all went well.
std::string first_error();

} // namespace commlens::cuda
