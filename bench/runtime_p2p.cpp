// Device-buffer point-to-point: the runtime's rendezvous against host staging (its baseline with
// an MPI that is not CUDA-aware) and against one raw CUDA IPC copy of the same size, the floor a
// GPU-to-GPU path starts from. Two ranks ping-pong device buffers of each size from 8 bytes up;
// run under COMMLENS_RUNTIME=ab with COMMLENS_RUNTIME_COLLECTIVES=p2p (bench/runtime_p2p.sh), the
// runtime alternates rendezvous and host path per message signature, both ranks in step, so even
// round trips are the runtime's and odd ones the baseline's (the trace's runtime_ops rows say the
// same). Prints per size the median one-way time of each and the ratios.
// Usage: runtime_p2p ITERATIONS MAX_BYTES. Rank r uses GPU r modulo the GPU count.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One raw copy of `bytes` from the peer's buffer over a CUDA IPC mapping, rank 1 copying.
double ipc_copy_seconds(int rank, void* mine, void* theirs_local, std::size_t bytes, int iterations) {
  cudaIpcMemHandle_t handle;
  if (rank == 0) {
    cudaIpcGetMemHandle(&handle, mine);
  }
  MPI_Bcast(&handle, sizeof handle, MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<double> times;
  if (rank == 1) {
    void* peer = nullptr;
    cudaIpcOpenMemHandle(&peer, handle, cudaIpcMemLazyEnablePeerAccess);
    for (int i = 0; i < iterations; ++i) {
      const double start = seconds_now();
      cudaMemcpy(theirs_local, peer, bytes, cudaMemcpyDeviceToDevice);
      cudaDeviceSynchronize();
      times.push_back(seconds_now() - start);
    }
    cudaIpcCloseMemHandle(peer);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return rank == 1 ? median(times) : 0.0;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::size_t{1} << 30;
  if (size != 2) {
    if (rank == 0) {
      std::fprintf(stderr, "runtime_p2p: run with 2 ranks\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int devices = 1;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(rank % devices);
  void* send = nullptr;
  void* receive = nullptr;
  cudaMalloc(&send, max_bytes);
  cudaMalloc(&receive, max_bytes);
  cudaMemset(send, rank + 1, max_bytes);
  const int peer = 1 - rank;
  if (rank == 0) {
    std::printf("%12s %14s %14s %14s %10s %10s %12s\n", "bytes", "runtime_us", "staged_us", "ipc_copy_us",
                "vs_staged", "vs_copy", "runtime_GBps");
  }
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= (bytes < (std::size_t{1} << 20) ? 8 : 4)) {
    const int count = static_cast<int>(bytes);
    std::vector<double> runtime_times;
    std::vector<double> staged_times;
    // Two warm-up round trips (one of each path: IPC mappings opened, pools filled), then pairs.
    for (int trip = 0; trip < 2 + 2 * iterations; ++trip) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = seconds_now();
      if (rank == 0) {
        MPI_Send(send, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(receive, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(receive, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(send, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
      const double one_way = (seconds_now() - start) / 2;
      if (trip >= 2) {
        (trip % 2 == 0 ? runtime_times : staged_times).push_back(one_way);
      }
    }
    const double copy = ipc_copy_seconds(rank, send, receive, bytes, iterations);
    double copy_on_rank0 = 0;
    MPI_Reduce(&copy, &copy_on_rank0, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double runtime = median(runtime_times);
      const double staged = median(staged_times);
      std::printf("%12zu %14.1f %14.1f %14.1f %9.2fx %9.2fx %12.1f\n", bytes, runtime * 1e6, staged * 1e6,
                  copy_on_rank0 * 1e6, staged / runtime, copy_on_rank0 / runtime, bytes / runtime / 1e9);
    }
  }
  cudaFree(send);
  cudaFree(receive);
  MPI_Finalize();
  return 0;
}
