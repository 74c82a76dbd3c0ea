// The host's CUDA API calls of each rank known exactly, for the tests of cuda_api_calls.
// Usage: api_calls LAUNCHES COPIES
// Per rank, after an MPI_Barrier (so the thread has its MPI thread number, 0, before its first CUDA
// call is recorded): LAUNCHES launches of one kernel (<<<...>>>: cudaLaunchKernel), then COPIES
// cudaMemcpy calls of 4 KiB between pinned host memory and the GPU (host to device first, then
// alternately back and forth), then one cudaDeviceSynchronize. Buffers are allocated before the
// barrier (cudaMalloc, cudaMallocHost: functions whose calls commlens does not record). The
// program makes no other launch, copy, memset or synchronisation call.
// Rank r uses device r modulo the device count.
#include "gpu_job.hpp"

namespace {

constexpr std::size_t kCopyBytes = 4096;

__global__ void add_one(float* values) {
  values[threadIdx.x] += 1.0f;
}

} // namespace

int main(int argc, char** argv) {
  const GpuJob job = join_gpu_job(&argc, &argv);
  const int launches = parse_count(argc, argv, 1, 7), copies = parse_count(argc, argv, 2, 5);
  CUDA_CHECK(cudaSetDevice(job.rank % job.devices));
  float* device = nullptr;
  float* host = nullptr;
  CUDA_CHECK(cudaMalloc(&device, kCopyBytes));
  CUDA_CHECK(cudaMallocHost(&host, kCopyBytes));
  MPI_Barrier(MPI_COMM_WORLD);

  for (int i = 0; i < launches; ++i) {
    add_one<<<1, kCopyBytes / sizeof(float)>>>(device);
    CUDA_CHECK(cudaGetLastError());
  }
  for (int i = 0; i < copies; ++i) {
    CUDA_CHECK(i % 2 == 0 ? cudaMemcpy(device, host, kCopyBytes, cudaMemcpyHostToDevice)
                          : cudaMemcpy(host, device, kCopyBytes, cudaMemcpyDeviceToHost));
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  MPI_Barrier(MPI_COMM_WORLD);
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFree(device));
  if (job.rank == 0) {
    std::printf("api_calls: %d launches, %d copies per rank\n", launches, copies);
  }
  MPI_Finalize();
  return 0;
}
