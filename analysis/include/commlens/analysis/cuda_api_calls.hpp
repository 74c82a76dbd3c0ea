#pragma once
// The host's CUDA API calls on the timeline (cuda_api_calls, trace mode): a lane per thread that
// made them, and a window's calls, each with the correlation id that ties it to the kernel, copy
// or memset it made (the same column of cuda_kernels, cuda_copies and cuda_memsets).
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commlens::analysis {

// One thread's CUDA API calls: a lane of the timeline.
struct CudaApiThread {
  int rank = 0;
  std::optional<int> thread;      // as mpi_calls.thread; empty: the thread made no MPI or NCCL call
  std::int64_t system_thread = 0; // its Linux thread id
  std::uint64_t calls = 0;        // over the whole run
};

// By rank, then thread (threads without an MPI number last, by Linux thread id). Empty without the
// table (summary mode, files of earlier versions).
std::vector<CudaApiThread> query_cuda_api_threads(const Database& database);

// The lane (index into `threads`) of a call of `rank` on `system_thread`; -1 for none.
int api_lane(const std::vector<CudaApiThread>& threads, int rank, std::int64_t system_thread);

// One row of cuda_api_calls with its function's name.
struct TimelineApiCall {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t system_thread = 0;
  std::string name; // cudaLaunchKernel, cuMemcpyHtoD_v2, ...
  std::int64_t correlation_id = 0;
  // Nesting among the thread's calls in the window, 0 outermost: a runtime function may call a
  // recorded driver function (cudaMemcpy around cuMemcpyHtoD_v2).
  int depth = 0;
};

// Every thread's calls of `rank` overlapping [start_ns, end_ns), ascending start.
std::vector<TimelineApiCall> query_timeline_api_calls(const Database& database, int rank,
                                                      std::int64_t start_ns, std::int64_t end_ns);

} // namespace commlens::analysis
