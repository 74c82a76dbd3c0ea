// Host time of one cudaMemcpyAsync as the calling thread sees it, the cost a profiler adds to a
// training step's hundreds of small copies (DDP copies every gradient into its bucket and back).
// The program links the shared CUDA runtime, as PyTorch does, so that libcommlens.so's runtime
// functions are the ones called. One rank queues COPIES copies of BYTES on one stream, device to
// device between slices of two allocations (gradients into a bucket), then the same number from
// the device to pinned host memory, 256 at a time so that the stream's queue never fills, and
// prints the host ns per call of each kind. bench/copy_call_cost.sh runs it unprofiled
// and under each way of recording copies, interleaved.
// Usage: copy_call_cost COPIES BYTES
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kSlices = 256;
constexpr int kCopiesPerWait = 256;

// Host ns per copy of `copies` copies made by `copy(i)`: the time of the calls alone, queued in
// batches of kCopiesPerWait and waited for outside the timing, so that a copy's time on the GPU
// (small copies run one after another on the stream) never counts.
template <class Copy> double ns_per_copy(int copies, cudaStream_t stream, Copy copy) {
  std::chrono::steady_clock::duration calls{};
  for (int first = 0; first < copies; first += kCopiesPerWait) {
    const int last = std::min(copies, first + kCopiesPerWait);
    const auto start = std::chrono::steady_clock::now();
    for (int i = first; i < last; ++i) {
      if (copy(i) != cudaSuccess) {
        std::fprintf(stderr, "copy_call_cost: copy %d failed\n", i);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    calls += std::chrono::steady_clock::now() - start;
    cudaStreamSynchronize(stream);
  }
  return std::chrono::duration<double, std::nano>(calls).count() / copies;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int copies = argc > 1 ? std::atoi(argv[1]) : 100000;
  const std::size_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4096;
  char *parameters = nullptr, *bucket = nullptr, *host = nullptr;
  cudaStream_t stream = nullptr;
  if (copies <= 0 || bytes == 0 || cudaSetDevice(0) != cudaSuccess ||
      cudaMalloc(&parameters, bytes * kSlices) != cudaSuccess ||
      cudaMalloc(&bucket, bytes * kSlices) != cudaSuccess ||
      cudaMallocHost(&host, bytes * kSlices) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "copy_call_cost: needs a GPU and positive COPIES and BYTES\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const auto slice = [bytes](char* base, int i) { return base + (i % kSlices) * bytes; };
  const auto device_to_device = [&](int i) {
    return cudaMemcpyAsync(slice(bucket, i), slice(parameters, i), bytes, cudaMemcpyDeviceToDevice, stream);
  };
  const auto device_to_host = [&](int i) {
    return cudaMemcpyAsync(slice(host, i), slice(bucket, i), bytes, cudaMemcpyDeviceToHost, stream);
  };
  ns_per_copy(copies / 10 + 1, stream, device_to_device); // the runtime's and profiler's first-use costs
  const double d2d = ns_per_copy(copies, stream, device_to_device);
  const double d2h = ns_per_copy(copies, stream, device_to_host);
  std::printf("%.1f %.1f\n", d2d, d2h);
  cudaStreamDestroy(stream);
  cudaFree(parameters);
  cudaFree(bucket);
  cudaFreeHost(host);
  MPI_Finalize();
  return 0;
}
