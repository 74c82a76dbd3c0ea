// Allreduce on device buffers: the commlens runtime, its baseline and NCCL, in one run.
// Run under `COMMLENS_RUNTIME=ab` (bench/runtime_allreduce.sh does): calls of one signature
// alternate runtime, baseline, runtime, ... starting with the runtime (docs/runtime.md), so the
// even-numbered calls of each size time the runtime and the odd ones the baseline (host staging on
// an MPI that is not CUDA-aware). NCCL (ncclAllReduce on the same buffers) is timed in the same
// process, when every rank has a GPU of its own (NCCL refuses two ranks on one GPU; with ranks
// sharing GPUs its columns say nan). Times are medians over ITERATIONS per size of the slowest rank; bus
// bandwidth uses the nccl-tests formula (bytes x 2 (P-1) / P / time). Usage: runtime_allreduce ITERATIONS
// MAX_BYTES [in-place] (in place: the runtime's two-shot algorithm; otherwise one-shot for two ranks,
// docs/runtime.md)
#include "gpu_job.hpp"

#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const auto [rank, size, devices] = join_gpu_job(&argc, &argv);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::size_t{1} << 30);
  const bool in_place = argc > 3 && std::string(argv[3]) == "in-place";
  CUDA_CHECK(cudaSetDevice(rank % devices));

  const bool with_nccl = size <= devices;
  ncclUniqueId id;
  if (rank == 0 && with_nccl)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nccl = nullptr;
  if (with_nccl && ncclCommInitRank(&nccl, size, id, rank) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 3);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  float *send = nullptr, *recv = nullptr;
  CUDA_CHECK(cudaMalloc(&send, max_bytes));
  CUDA_CHECK(cudaMalloc(&recv, max_bytes));
  CUDA_CHECK(cudaMemset(send, 0, max_bytes));
  const double factor = 2.0 * (size - 1) / size;
  if (rank == 0) {
    std::printf("%12s %12s %12s %12s %10s %10s %10s %10s %10s\n", "bytes", "runtime_us", "baseline_us",
                "nccl_us", "rt_busbw", "base_busbw", "nccl_busbw", "rt/nccl", "rt/base");
  }
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes = bytes < 65536 ? 65536 : bytes * 4) {
    const int count = static_cast<int>(bytes / sizeof(float));
    std::vector<double> runtime, baseline, nccl_times;
    for (int i = 0; i < 2 * (iterations + 2); ++i) { // two warm-up pairs
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      const double took = slowest_rank(MPI_Wtime() - start);
      if (i >= 4)
        (i % 2 == 0 ? runtime : baseline).push_back(took);
    }
    for (int i = 0; with_nccl && i < iterations + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      ncclAllReduce(in_place ? recv : send, recv, count, ncclFloat, ncclSum, nccl, stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const double took = slowest_rank(MPI_Wtime() - start);
      if (i >= 2)
        nccl_times.push_back(took);
    }
    const double r = median(runtime), b = median(baseline);
    const double n = with_nccl ? median(nccl_times) : std::nan("");
    const auto busbw = [&](double seconds) { return double(bytes) * factor / seconds / 1e9; };
    if (rank == 0) {
      std::printf("%12zu %12.1f %12.1f %12.1f %10.1f %10.1f %10.1f %10.2f %10.2f\n", bytes, r * 1e6, b * 1e6,
                  n * 1e6, busbw(r), busbw(b), busbw(n), n / r, b / r);
    }
  }
  if (with_nccl)
    ncclCommDestroy(nccl);
  MPI_Finalize();
  return 0;
}
