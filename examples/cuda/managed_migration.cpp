// Two ranks send from CUDA managed memory, migrating it to their GPU and back each time.
// Usage: managed_migration ITERATIONS BYTES
// Rank r allocates BYTES of managed memory (cudaMallocManaged) and uses device r modulo the device
// count. Per iteration: the host writes all BYTES (the pages live on the host from then on),
// cudaMemPrefetchAsync to the GPU (BYTES migrate host to device), cudaMemPrefetchAsync back to the
// host (BYTES migrate device to host), each followed by cudaStreamSynchronize, then MPI_Sendrecv
// of the managed buffer (buffer_location managed) into a host vector. Per rank: unified-memory
// migrations (path managed) of ITERATIONS x BYTES each way, outside MPI; the driver decides how many
// records that takes. Keep BYTES small: managed memory must not exceed what the GPU has free.
#include "gpu_job.hpp"

#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int rank = start.rank, size = start.size, devices = start.devices, iterations = start.iterations;
  const std::size_t bytes = start.amount;
  const int device = rank % devices, peer = (rank + 1) % size;
  CUDA_CHECK(cudaSetDevice(device));
  char* managed = nullptr;
  CUDA_CHECK(cudaMallocManaged(&managed, bytes));
  std::vector<char> received(bytes);
  cudaMemLocation on_gpu{};
  on_gpu.type = cudaMemLocationTypeDevice;
  on_gpu.id = device;
  cudaMemLocation on_host{};
  on_host.type = cudaMemLocationTypeHost;

  for (int i = 0; i < iterations; ++i) {
    std::memset(managed, rank + i, bytes);
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, on_gpu, 0, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, on_host, 0, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    MPI_Sendrecv(managed, static_cast<int>(bytes), MPI_BYTE, peer, 0, received.data(),
                 static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  CUDA_CHECK(cudaFree(managed));
  MPI_Finalize();
  return 0;
}
