// MPI_Allreduce on device buffers allocated for one count and freed before the next, the way deep-
// learning frameworks free and reuse GPU memory: for each count in {1, 3, 1000, 65537, 2^20,
// 2^24 + 5} every rank cudaMallocs an int input and output, sums them (MPI_INT, MPI_SUM), then
// cudaMallocs a float buffer for an in-place MPI_MAX, and frees all three before the next count.
// ROUNDS rounds of the whole sequence. Every result is checked on every rank; rank 0 prints
// "alloc_reuse_check: ok" when all matched, else one line per wrong call (rank, round, count,
// call) and "alloc_reuse_check: FAILED".
// Usage: alloc_reuse_check [ROUNDS]. Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

constexpr int kCounts[] = {1, 3, 1000, 65537, 1 << 20, (1 << 24) + 5};

// Elements depend on the rank and the index, so a result taken from the wrong buffer or the wrong
// offset of the right one does not pass.
std::int32_t input_value(int rank, std::size_t index) {
  return static_cast<std::int32_t>((index * 7 + static_cast<std::size_t>(rank) * 13) % 1000);
}

float max_input(int rank, std::size_t index) {
  return static_cast<float>((index + static_cast<std::size_t>(rank) * 31) % 977);
}

long check_sum(const GpuJob& job, int count) {
  const std::size_t n = static_cast<std::size_t>(count);
  std::vector<std::int32_t> host(n);
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = input_value(job.rank, i);
  }
  std::int32_t* input = nullptr;
  std::int32_t* output = nullptr;
  CUDA_CHECK(cudaMalloc(&input, n * sizeof(std::int32_t)));
  CUDA_CHECK(cudaMalloc(&output, n * sizeof(std::int32_t)));
  CUDA_CHECK(cudaMemcpy(input, host.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  long wrong = MPI_Allreduce(input, output, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ? 1 : 0;
  CUDA_CHECK(cudaMemcpy(host.data(), output, n * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    std::int32_t expected = 0;
    for (int r = 0; r < job.size; ++r) {
      expected += input_value(r, i);
    }
    wrong += host[i] != expected ? 1 : 0;
  }
  CUDA_CHECK(cudaFree(input));
  CUDA_CHECK(cudaFree(output));
  return wrong;
}

long check_max_in_place(const GpuJob& job, int count) {
  const std::size_t n = static_cast<std::size_t>(count);
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = max_input(job.rank, i);
  }
  float* buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(buffer, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  long wrong = MPI_Allreduce(MPI_IN_PLACE, buffer, count, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS;
  CUDA_CHECK(cudaMemcpy(host.data(), buffer, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    float expected = 0;
    for (int r = 0; r < job.size; ++r) {
      expected = std::max(expected, max_input(r, i));
    }
    wrong += host[i] != expected ? 1 : 0;
  }
  CUDA_CHECK(cudaFree(buffer));
  return wrong;
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const int rounds = parse_count(argc, argv, 1, 2);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  long failures = 0;
  for (int round = 0; round < rounds; ++round) {
    for (const int count : kCounts) {
      const long sum_wrong = check_sum(job, count);
      const long max_wrong = check_max_in_place(job, count);
      if (sum_wrong + max_wrong > 0) {
        std::printf("alloc_reuse_check: rank %d round %d count %d: %ld wrong sums, %ld wrong maxima\n",
                    job.rank, round, count, sum_wrong, max_wrong);
      }
      failures += sum_wrong + max_wrong;
    }
  }
  long all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (job.rank == 0) {
    std::printf("alloc_reuse_check: %s\n", all_failures == 0 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
