// The data-movement collectives on device buffers, the runtime against host staging (its baseline
// with an MPI that is not CUDA-aware), in one run: under COMMLENS_RUNTIME=ab the runtime takes
// turns with the baseline per call signature (function and block size), the runtime first, every
// rank in step, so even calls of a size are the runtime's and odd ones the baseline's (the trace's
// runtime_ops rows say the same). Sizes are nccl-tests' (the whole buffer: allgather's output,
// reduce_scatter's input, alltoall's send buffer, the root's buffer of gather and scatter; a block
// is size / ranks), bus bandwidth is nccl-tests' algbw x (P-1)/P for all five.
// Prints per collective and size the median time of the slowest rank for each, both bus
// bandwidths and baseline / runtime.
// Usage: runtime_data_movement ITERATIONS MIN_BYTES MAX_BYTES. Rank r uses GPU r modulo the GPUs.
#include "gpu_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum class Collective { Allgather, ReduceScatterBlock, Alltoall, Gather, Scatter };
constexpr Collective kCollectives[] = {Collective::Allgather, Collective::ReduceScatterBlock,
                                       Collective::Alltoall, Collective::Gather, Collective::Scatter};

const char* name(Collective collective) {
  const char* names[] = {"allgather", "reduce_scatter_block", "alltoall", "gather", "scatter"};
  return names[static_cast<int>(collective)];
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One call of `collective` with blocks of `block` bytes; send and receive hold size x block.
void call(Collective collective, std::size_t block, void* send, void* receive) {
  const int bytes = static_cast<int>(block);
  const int floats = static_cast<int>(block / sizeof(float));
  switch (collective) {
  case Collective::Allgather:
    MPI_Allgather(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, MPI_COMM_WORLD);
    break;
  case Collective::ReduceScatterBlock:
    MPI_Reduce_scatter_block(send, receive, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    break;
  case Collective::Alltoall:
    MPI_Alltoall(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, MPI_COMM_WORLD);
    break;
  case Collective::Gather:
    MPI_Gather(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    break;
  case Collective::Scatter:
    MPI_Scatter(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    break;
  }
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const int iterations = std::max(1, parse_count(argc, argv, 1, 20));
  const std::size_t min_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8;
  const std::size_t max_bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : std::size_t{1} << 28;
  if (job.devices == 0) {
    MPI_Finalize();
    return 0;
  }
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const auto ranks = static_cast<std::size_t>(job.size);
  void* send = nullptr;
  void* receive = nullptr;
  CUDA_CHECK(cudaMalloc(&send, max_bytes + ranks * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&receive, max_bytes + ranks * sizeof(float)));
  CUDA_CHECK(cudaMemset(send, 0, max_bytes + ranks * sizeof(float)));
  if (job.rank == 0) {
    std::printf("%d ranks, %d GPU(s) visible, %d iterations; times in us, bus bandwidth in GB/s\n", job.size,
                job.devices, iterations);
    std::printf("%-22s %12s %12s %12s %10s %10s %8s\n", "collective", "bytes", "runtime_us", "staged_us",
                "runtime_bw", "staged_bw", "ratio");
  }
  for (const Collective collective : kCollectives) {
    for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      // A block of at least one float, the same on every rank.
      const std::size_t block = std::max(bytes / ranks / sizeof(float), std::size_t{1}) * sizeof(float);
      std::vector<double> turns[2]; // [0]: the runtime's turns, [1]: the baseline's
      for (int i = 0; i < 2 * (iterations + 1); ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = seconds_now();
        call(collective, block, send, receive);
        const double slowest = slowest_rank(seconds_now() - start);
        if (i >= 2) { // the first turn of each pays for opening the peers' buffers
          turns[i % 2].push_back(slowest);
        }
      }
      if (job.rank == 0) {
        const double runtime = median(turns[0]);
        const double staged = median(turns[1]);
        const double total = static_cast<double>(block * ranks);
        const double factor = static_cast<double>(ranks - 1) / static_cast<double>(ranks);
        std::printf("%-22s %12zu %12.1f %12.1f %10.2f %10.2f %8.2f\n", name(collective), block * ranks,
                    runtime * 1e6, staged * 1e6, total / runtime * factor / 1e9,
                    total / staged * factor / 1e9, staged / runtime);
      }
    }
  }
  cudaFree(send);
  cudaFree(receive);
  MPI_Finalize();
  return 0;
}
