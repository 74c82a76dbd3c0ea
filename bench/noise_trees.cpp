// MPI_Bcast and MPI_Reduce (float sum) on device buffers, timed per call under
// COMMLENS_RUNTIME=ab: the runtime takes every even call of a signature and the host-staged
// baseline every odd one, so both are measured in the same run on the same buffers.
// bench/noise_trees.sh runs it with the runtime's event-driven and blocking trees, with and
// without injected noise (COMMLENS_NOISE), and prints the table.
// Usage: noise_trees ITERATIONS BYTES... ; prints one line per operation and size:
//   noise_trees: bcast bytes B runtime_ms R baseline_ms S
// (mean over ITERATIONS calls of each half, each call timed on its slowest rank).
#include "gpu_job.hpp"

#include <cstdlib>
#include <vector>

namespace {

double timed(const auto& call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  call();
  return slowest_rank(MPI_Wtime() - start);
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  const int iterations = parse_count(argc, argv, 1, 20);
  for (int index = 2; index < argc; ++index) {
    const std::size_t bytes = std::strtoull(argv[index], nullptr, 10);
    const int count = static_cast<int>(bytes / sizeof(float));
    float *send = nullptr, *recv = nullptr;
    CUDA_CHECK(cudaMalloc(&send, bytes));
    CUDA_CHECK(cudaMalloc(&recv, bytes));
    CUDA_CHECK(cudaMemset(send, 0, bytes));
    for (const bool reduce : {false, true}) {
      const auto call = [&] {
        if (reduce) {
          MPI_Reduce(send, recv, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        } else {
          MPI_Bcast(send, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
        }
      };
      for (int warm = 0; warm < 4; ++warm) { // both halves' first uses (IPC opens, staging buffers)
        timed(call);
      }
      double halves[2] = {0, 0};
      for (int i = 0; i < 2 * iterations; ++i) {
        halves[i % 2] += timed(call);
      }
      if (job.rank == 0) {
        std::printf("noise_trees: %s bytes %zu runtime_ms %.4f baseline_ms %.4f\n",
                    reduce ? "reduce" : "bcast", bytes, 1e3 * halves[0] / iterations,
                    1e3 * halves[1] / iterations);
      }
    }
    CUDA_CHECK(cudaFree(send));
    CUDA_CHECK(cudaFree(recv));
  }
  MPI_Finalize();
  return 0;
}
