#pragma once
// What every sweep `commlens tune` profiles shares: its command line
//   PROGRAM CALLS MIN_BYTES MAX_BYTES FACTOR [in_place]
// (CALLS calls per size, sizes from MIN_BYTES multiplied by FACTOR up to MAX_BYTES), the GPU of
// each rank (rank r on GPU r % GPUs) and device buffers. The sweeps time nothing themselves: the
// runtime, under COMMLENS_RUNTIME_SELECT=sweep, runs every candidate in turn and its runtime_ops
// rows are the measurements. Each call follows a barrier so that the ranks start it together.
#include "gpu_job.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

struct SweepPlan {
  GpuJob job;
  int calls = 20;
  std::vector<std::size_t> sizes{};
  bool in_place = false;
};

inline SweepPlan start_sweep(int* argc, char*** argv) {
  SweepPlan plan{join_gpu_job(argc, argv)};
  char** args = *argv;
  if (*argc < 5) {
    if (plan.job.rank == 0) {
      std::fprintf(stderr, "usage: %s CALLS MIN_BYTES MAX_BYTES FACTOR [in_place]\n", args[0]);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  plan.calls = parse_count(*argc, args, 1, plan.calls);
  const std::size_t min_bytes = std::strtoull(args[2], nullptr, 10);
  const std::size_t max_bytes = std::strtoull(args[3], nullptr, 10);
  const std::size_t factor = std::max<std::size_t>(2, std::strtoull(args[4], nullptr, 10));
  for (std::size_t bytes = std::max<std::size_t>(min_bytes, 1); bytes <= max_bytes; bytes *= factor) {
    plan.sizes.push_back(bytes);
  }
  plan.in_place = *argc > 5 && std::strcmp(args[5], "in_place") == 0;
  CUDA_CHECK(cudaSetDevice(plan.job.rank % plan.job.devices));
  return plan;
}

// A zeroed device buffer of `bytes` (freed by the process's exit).
inline void* device_buffer(std::size_t bytes) {
  void* buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, bytes));
  CUDA_CHECK(cudaMemset(buffer, 0, bytes));
  CUDA_CHECK(cudaDeviceSynchronize());
  return buffer;
}

// CALLS calls of `call(bytes)` at every size, each after a barrier, two more first (the first
// calls open the peers' IPC mappings; tune leaves out the calls that opened any). Each swept call
// (each instantiation: `warmed` is per Call type) starts with CALLS + 2 calls at its first size,
// then MPI_Pcontrol(2): the start of a job is slower for a while (an 8-rank allreduce under MPS
// took 74 instead of 28 µs in its first calls), and tune measures only calls of phase 1 and later,
// so the first swept call's warm-up is left out; a later one's falls in the phase before, counted.
template <typename Call> void sweep_sizes(const SweepPlan& plan, Call&& call) {
  static bool warmed = false;
  if (!warmed && !plan.sizes.empty()) {
    for (int i = 0; i < plan.calls + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      call(plan.sizes.front());
    }
    MPI_Pcontrol(2);
    warmed = true;
  }
  for (const std::size_t bytes : plan.sizes) {
    for (int i = 0; i < plan.calls + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      call(bytes);
    }
  }
}
