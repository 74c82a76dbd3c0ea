// Small device-buffer collectives for the small-message floor (bench/runtime_floor.sh): allreduce
// (float sum), bcast, allgather, gather and scatter (root 0), each at every size given, 2 x
// (ITERATIONS + 1) calls a size with a host barrier before each, so that under COMMLENS_RUNTIME=ab
// the runtime and its host-staged baseline take the same number of turns and every call starts
// with every rank present. It prints nothing per call: the figures come from the trace
// (bench/runtime_floor.py reads the merged database). Sizes follow nccl-tests, as
// runtime_data_movement does: the whole buffer (allgather's output, the root's buffer of gather
// and scatter), a block being size / ranks, at least one float; allreduce and bcast move `size`.
// Usage: runtime_floor ITERATIONS [BYTES...] (default 20 8 65536). Rank r uses GPU r modulo the GPUs.
#include "gpu_job.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

enum class Collective { Allreduce, Bcast, Allgather, Gather, Scatter };
constexpr Collective kCollectives[] = {Collective::Allreduce, Collective::Bcast, Collective::Allgather,
                                       Collective::Gather, Collective::Scatter};

// One call moving `bytes` (allreduce, bcast) or blocks of `block` bytes (the others).
void call(Collective collective, std::size_t bytes, std::size_t block, void* send, void* receive) {
  const int floats = static_cast<int>(std::max<std::size_t>(bytes / sizeof(float), 1));
  const int block_bytes = static_cast<int>(block);
  switch (collective) {
  case Collective::Allreduce:
    MPI_Allreduce(send, receive, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    break;
  case Collective::Bcast:
    MPI_Bcast(send, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
    break;
  case Collective::Allgather:
    MPI_Allgather(send, block_bytes, MPI_BYTE, receive, block_bytes, MPI_BYTE, MPI_COMM_WORLD);
    break;
  case Collective::Gather:
    MPI_Gather(send, block_bytes, MPI_BYTE, receive, block_bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    break;
  case Collective::Scatter:
    MPI_Scatter(send, block_bytes, MPI_BYTE, receive, block_bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    break;
  }
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const int iterations = std::max(1, parse_count(argc, argv, 1, 20));
  std::vector<std::size_t> sizes;
  for (int i = 2; i < argc; ++i) {
    sizes.push_back(std::stoull(argv[i]));
  }
  if (sizes.empty()) {
    sizes = {8, 65536};
  }
  if (job.devices == 0) {
    MPI_Finalize();
    return 0;
  }
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const auto ranks = static_cast<std::size_t>(job.size);
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  const std::size_t buffer_bytes = (largest + ranks * sizeof(float)) * 2;
  void* send = nullptr;
  void* receive = nullptr;
  CUDA_CHECK(cudaMalloc(&send, buffer_bytes));
  CUDA_CHECK(cudaMalloc(&receive, buffer_bytes));
  CUDA_CHECK(cudaMemset(send, 0, buffer_bytes));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (const Collective collective : kCollectives) {
    for (const std::size_t bytes : sizes) {
      const std::size_t block = std::max(bytes / ranks / sizeof(float), std::size_t{1}) * sizeof(float);
      for (int i = 0; i < 2 * (iterations + 1); ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        call(collective, bytes, block, send, receive);
      }
    }
  }
  if (job.rank == 0) {
    std::printf("runtime_floor: %d ranks, %d GPU(s) visible, %d calls per collective and size\n", job.size,
                job.devices, 2 * (iterations + 1));
  }
  CUDA_CHECK(cudaFree(send));
  CUDA_CHECK(cudaFree(receive));
  MPI_Finalize();
  return 0;
}
