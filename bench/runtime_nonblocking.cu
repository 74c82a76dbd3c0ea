// Overlap of nonblocking collectives with computation on device buffers: each iteration posts N
// MPI_Iallreduce calls (float sums of BYTES each, on N buffers; with --collective=ibcast N
// MPI_Ibcast calls, call i from root i modulo the ranks), launches one compute kernel of a fixed
// length on a stream of its own, then waits for all of them (MPI_Waitall) and the kernel.
// Also timed alone: the N calls posted and waited for without the kernel, and the kernel alone.
// bench/runtime_nonblocking.sh runs it with the runtime's nonblocking collectives and with the
// host-staged baseline and prints the ratios. Times are medians of the slowest rank over ITERATIONS.
// Usage: runtime_nonblocking [--collective=iallreduce|ibcast] ITERATIONS CALLS COMPUTE_US BYTES...
// Prints per size: "runtime_nonblocking: bytes B calls N compute_ms K comm_ms C overlapped_ms T"
#include "gpu_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const std::string option = "--collective=";
  const bool ibcast = argc > 1 && std::string(argv[1]) == option + "ibcast";
  if (argc > 1 && std::string(argv[1]).rfind(option, 0) == 0) {
    --argc;
    ++argv;
  }
  if (argc < 5) {
    if (job.rank == 0) {
      std::fprintf(stderr, "usage: runtime_nonblocking [--collective=iallreduce|ibcast] ITERATIONS CALLS "
                           "COMPUTE_US BYTES...\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int iterations = std::atoi(argv[1]);
  const int calls = std::atoi(argv[2]);
  const double compute_us = std::atof(argv[3]);
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, job.rank % job.devices));
  const long long cycles = static_cast<long long>(compute_us * clock_khz / 1000.0);
  cudaStream_t compute = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  for (int a = 4; a < argc; ++a) {
    const std::size_t bytes = std::stoull(argv[a]);
    const int count = static_cast<int>(bytes / sizeof(float));
    std::vector<float*> buffers(calls);
    for (float*& buffer : buffers) {
      CUDA_CHECK(cudaMalloc(&buffer, bytes));
      CUDA_CHECK(cudaMemset(buffer, 0, bytes));
    }
    std::vector<MPI_Request> requests(calls);
    // One iteration: the calls (with_comm), the kernel (with_compute), or both overlapped.
    auto iteration = [&](bool with_comm, bool with_compute) {
      CUDA_CHECK(cudaDeviceSynchronize());
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (with_comm) {
        for (int i = 0; i < calls; ++i) {
          if (ibcast) {
            MPI_Ibcast(buffers[i], count, MPI_FLOAT, i % job.size, MPI_COMM_WORLD, &requests[i]);
          } else {
            MPI_Iallreduce(MPI_IN_PLACE, buffers[i], count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &requests[i]);
          }
        }
      }
      if (with_compute) {
        spin<<<1, 1, 0, compute>>>(cycles);
      }
      if (with_comm) {
        MPI_Waitall(calls, requests.data(), MPI_STATUSES_IGNORE);
      }
      CUDA_CHECK(cudaStreamSynchronize(compute));
      return slowest_rank(MPI_Wtime() - start);
    };
    iteration(true, true); // first uses (IPC opens) out of the timings
    std::vector<double> comm, compute_only, overlapped;
    for (int i = 0; i < iterations; ++i) {
      comm.push_back(iteration(true, false));
      compute_only.push_back(iteration(false, true));
      overlapped.push_back(iteration(true, true));
    }
    if (job.rank == 0) {
      std::printf("runtime_nonblocking: bytes %zu calls %d compute_ms %.3f comm_ms %.3f overlapped_ms %.3f\n",
                  bytes, calls, median(compute_only) * 1e3, median(comm) * 1e3, median(overlapped) * 1e3);
    }
    for (float* buffer : buffers) {
      CUDA_CHECK(cudaFree(buffer));
    }
  }
  CUDA_CHECK(cudaStreamDestroy(compute));
  MPI_Finalize();
  return 0;
}
