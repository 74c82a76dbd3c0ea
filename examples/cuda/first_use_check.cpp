// The first MPI_Allreduce on buffers the runtime has not mapped yet, and the one after: per size,
// fresh device buffers, a first call, a pause (for the runtime's background opens), a second call
// on the same buffers; every result checked. This runs twice per size: a warm-up round (kernel
// modules load, the host path's pinned pool grows to the size, the first IPC open initialises the
// driver's IPC state), then the timed round, so that the first call's time is the opens' alone. With
// COMMLENS_RUNTIME_BACKGROUND_OPENS=1 the runtime runs a small first call on the host path
// while the peers' CUDA IPC handles open on its worker thread (about 2.3 ms each between GPUs), and the
// second call finds them mapped; with 0 the first call waits for the opens. The buffers of every size stay
// allocated to the end: a new buffer at the address of one a peer mapped before is opened by the call itself
// (docs/runtime.md says why). Rank 0 prints "bytes B first_us F second_us S" per size (the slowest rank's
// time) and "first_use_check: ok" when every result matched. Usage: first_use_check [SIZES...] (bytes,
// multiples of 4; default 8 65536 1048576). Rank r uses GPU r modulo the GPU count.
#include "cuda_check.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// One checked call: element i of rank r is (r + 1) * (i % 13), so the sum is known everywhere.
double timed_call(const std::int32_t* send, std::int32_t* recv, int count, int size, long* failures) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  const int rc = MPI_Allreduce(send, recv, count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  const double took = MPI_Wtime() - start;
  std::vector<std::int32_t> got(static_cast<std::size_t>(count));
  CUDA_CHECK(cudaMemcpy(got.data(), recv, got.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  const std::int32_t ranks_sum = size * (size + 1) / 2;
  for (int i = 0; i < count; ++i) {
    *failures += got[static_cast<std::size_t>(i)] != ranks_sum * (i % 13);
  }
  *failures += rc != MPI_SUCCESS;
  return slowest_rank(took);
}

// Fresh buffers of `bytes`, a first call, a pause, a second call; rank 0 prints the times when
// `timed`. The buffers are kept (in *allocations) until the end.
void first_and_second_call(std::size_t bytes, int rank, int size, bool timed, long* failures,
                           std::vector<void*>* allocations) {
  const int count = static_cast<int>(bytes / sizeof(std::int32_t));
  std::vector<std::int32_t> mine(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    mine[static_cast<std::size_t>(i)] = (rank + 1) * (i % 13);
  }
  std::int32_t* send = nullptr;
  std::int32_t* recv = nullptr;
  CUDA_CHECK(cudaMalloc(&send, bytes));
  CUDA_CHECK(cudaMalloc(&recv, bytes));
  CUDA_CHECK(cudaMemcpy(send, mine.data(), bytes, cudaMemcpyHostToDevice));
  const double first = timed_call(send, recv, count, size, failures);
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // the background opens finish
  CUDA_CHECK(cudaMemset(recv, 0, bytes));
  const double second = timed_call(send, recv, count, size, failures);
  if (rank == 0 && timed) {
    std::printf("bytes %zu first_us %.1f second_us %.1f\n", bytes, first * 1e6, second * 1e6);
  }
  allocations->insert(allocations->end(), {send, recv});
}

} // namespace

int main(int argc, char** argv) {
  const auto [rank, size, devices] = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(rank % devices));
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  }
  if (sizes.empty()) {
    sizes = {8, 65536, 1048576};
  }
  long failures = 0;
  std::vector<void*> allocations;
  for (const bool timed : {false, true}) {
    for (const std::size_t bytes : sizes) {
      first_and_second_call(bytes, rank, size, timed, &failures, &allocations);
    }
  }
  for (void* allocation : allocations) {
    CUDA_CHECK(cudaFree(allocation));
  }
  long all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("first_use_check: %s (%ld failures)\n", all_failures == 0 ? "ok" : "FAILED", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
