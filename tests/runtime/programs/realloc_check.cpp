// MPI_Allreduce on buffers allocated anew for every call and freed after it, the pattern of
// programs without a caching allocator: ITERATIONS calls of BYTES each, every result checked. The
// runtime maps every peer's fresh buffers through CUDA IPC; a mapping kept after its owner freed the
// buffer keeps that memory allocated, so GPU memory in use must stay bounded however many calls
// run. Rank 0 prints "gpu_memory: start S MiB peak P MiB end E MiB" (the GPU's memory in use,
// sampled after every call) and "realloc_check: ok" when every result matched.
// Usage: realloc_check ITERATIONS BYTES. Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

std::size_t used_gpu_memory() {
  std::size_t free = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return total - free;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

} // namespace

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int count = static_cast<int>(start.amount / sizeof(std::int32_t));
  CUDA_CHECK(cudaSetDevice(start.rank % start.devices));
  CUDA_CHECK(cudaFree(nullptr));
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t start_level = used_gpu_memory();
  std::size_t peak = start_level;
  std::vector<std::int32_t> mine(static_cast<std::size_t>(count), start.rank + 1);
  std::vector<std::int32_t> got(static_cast<std::size_t>(count));
  const std::int32_t expected = start.size * (start.size + 1) / 2;
  long failures = 0;
  for (int i = 0; i < start.iterations; ++i) {
    std::int32_t* send = nullptr;
    std::int32_t* recv = nullptr;
    CUDA_CHECK(cudaMalloc(&send, start.amount));
    CUDA_CHECK(cudaMalloc(&recv, start.amount));
    CUDA_CHECK(cudaMemcpy(send, mine.data(), start.amount, cudaMemcpyHostToDevice));
    failures += MPI_Allreduce(send, recv, count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
    CUDA_CHECK(cudaMemcpy(got.data(), recv, start.amount, cudaMemcpyDeviceToHost));
    failures += std::ranges::count_if(got, [&](std::int32_t value) { return value != expected; });
    CUDA_CHECK(cudaFree(send));
    CUDA_CHECK(cudaFree(recv));
    MPI_Barrier(MPI_COMM_WORLD); // every rank freed: what is still in use is held by mappings
    peak = std::max(peak, used_gpu_memory());
  }
  long all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (start.rank == 0) {
    std::printf("gpu_memory: start %.1f MiB peak %.1f MiB end %.1f MiB\n", mib(start_level), mib(peak),
                mib(used_gpu_memory()));
    std::printf("realloc_check: %s (%ld failures)\n", all_failures == 0 ? "ok" : "FAILED", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
