// A steady workload for comparing the runtime's Static selection (the tuning table) with Dynamic
// selection (bench/runtime_dynamic.sh runs it under each): at each size, CALLS float-sum
// allreduces and CALLS allgathers (the size is the allgather's block) on device buffers, each call
// after a barrier and timed on the host. Prints per operation and size the slowest rank's mean
// time over the second half of the calls (after Dynamic selection has explored: its first round
// takes 3 calls per candidate, a few percent of the calls) and over all of them, and the median
// over the second half (a call that met a time slice or a page fault moves the mean, not it).
// Usage: runtime_dynamic CALLS BYTES... Rank r uses GPU r modulo the GPUs.
#include "gpu_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

// Each call's time on this rank, then every call's slowest rank.
template <typename Call> std::vector<double> timed_calls(int calls, Call&& call) {
  std::vector<double> seconds(static_cast<std::size_t>(calls));
  for (double& time : seconds) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    call();
    time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

double mean_us(const std::vector<double>& seconds, std::size_t first) {
  return std::accumulate(seconds.begin() + static_cast<std::ptrdiff_t>(first), seconds.end(), 0.0) * 1e6 /
         static_cast<double>(seconds.size() - first);
}

double median_us(const std::vector<double>& seconds, std::size_t first) {
  std::vector<double> rest(seconds.begin() + static_cast<std::ptrdiff_t>(first), seconds.end());
  const auto middle = rest.begin() + static_cast<std::ptrdiff_t>(rest.size() / 2);
  std::nth_element(rest.begin(), middle, rest.end());
  return *middle * 1e6;
}

void print_row(const char* operation, std::size_t bytes, const std::vector<double>& seconds) {
  const std::size_t half = seconds.size() / 2;
  std::printf("%-10s %12zu %14.2f %14.2f %14.2f\n", operation, bytes, mean_us(seconds, half),
              mean_us(seconds, 0), median_us(seconds, half));
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const int calls = std::max(parse_count(argc, argv, 1, 200), 2);
  std::vector<std::size_t> sizes;
  for (int index = 2; index < argc; ++index) {
    sizes.push_back(std::max<std::size_t>(std::strtoull(argv[index], nullptr, 10), 4));
  }
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  std::size_t largest = 4;
  for (const std::size_t bytes : sizes) {
    largest = std::max(largest, bytes);
  }
  void *send = nullptr, *recv = nullptr;
  CUDA_CHECK(cudaMalloc(&send, largest));
  CUDA_CHECK(cudaMalloc(&recv, largest * static_cast<std::size_t>(job.size)));
  CUDA_CHECK(cudaMemset(send, 0, largest));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (job.rank == 0) {
    std::printf("%-10s %12s %14s %14s %14s\n", "operation", "bytes", "mean_us_2nd", "mean_us_all",
                "median_us_2nd");
  }
  for (const std::size_t bytes : sizes) {
    const int count = static_cast<int>(bytes / sizeof(float));
    const auto allreduce =
        timed_calls(calls, [&] { MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    const auto allgather = timed_calls(
        calls, [&] { MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD); });
    if (job.rank == 0) {
      print_row("allreduce", bytes, allreduce);
      print_row("allgather", bytes, allgather);
    }
  }
  CUDA_CHECK(cudaFree(send));
  CUDA_CHECK(cudaFree(recv));
  MPI_Finalize();
  return 0;
}
