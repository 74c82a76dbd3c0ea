// The allreduce sweep `commlens tune` profiles once per forced algorithm: float sums on device
// buffers from 8 bytes up to MAX_BYTES, doubling, ITERATIONS calls per size after two warm-up calls
// (which open the IPC mappings), each after a barrier so the ranks start together. It times nothing
// itself: the runtime's runtime_ops rows are the measurements. Rank r runs on GPU r % GPUs.
// Usage: allreduce_sweep ITERATIONS MAX_BYTES
#include "gpu_job.hpp"

#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iterations = parse_count(argc, argv, 1, 20);
  const std::size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::size_t{1} << 30);
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(rank % devices));
  void *send = nullptr, *recv = nullptr;
  CUDA_CHECK(cudaMalloc(&send, max_bytes));
  CUDA_CHECK(cudaMalloc(&recv, max_bytes));
  CUDA_CHECK(cudaMemset(send, 0, max_bytes));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes / sizeof(float));
    for (int i = 0; i < iterations + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  CUDA_CHECK(cudaFree(send));
  CUDA_CHECK(cudaFree(recv));
  MPI_Finalize();
  return 0;
}
