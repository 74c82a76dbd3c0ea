// Copy-heavy MPI benchmark: two ranks exchange device buffers through pinned host memory
// (DtoH, MPI_Sendrecv, HtoD) ITERATIONS times. Usage: staged_copy_exchange ITERATIONS BYTES
// Rank 0 prints the slowest rank's loop time in seconds; bench/cuda_overhead.sh runs it with the
// CUDA collectors on and off, interleaved, and compares medians.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::size_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (1u << 20);
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
      cudaSetDevice(rank % devices) != cudaSuccess) {
    std::fprintf(stderr, "staged_copy_exchange: no usable GPU\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char *device = nullptr, *host_send = nullptr, *host_recv = nullptr;
  if (cudaMalloc(&device, bytes) != cudaSuccess || cudaMallocHost(&host_send, bytes) != cudaSuccess ||
      cudaMallocHost(&host_recv, bytes) != cudaSuccess) {
    std::fprintf(stderr, "staged_copy_exchange: allocation of %zu bytes failed\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int peer = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    cudaMemcpy(host_send, device, bytes, cudaMemcpyDeviceToHost);
    MPI_Sendrecv(host_send, static_cast<int>(bytes), MPI_BYTE, peer, 0, host_recv, static_cast<int>(bytes),
                 MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    cudaMemcpy(device, host_recv, bytes, cudaMemcpyHostToDevice);
  }
  double elapsed = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%.6f\n", slowest);
  }
  cudaFree(device);
  cudaFreeHost(host_send);
  cudaFreeHost(host_recv);
  MPI_Finalize();
  return 0;
}
