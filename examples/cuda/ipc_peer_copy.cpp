// Two ranks on two GPUs (rank r on device r) exchange CUDA IPC handles and copy into each other's
// buffers. Usage: ipc_peer_copy ITERATIONS BYTES
// Rank 0 first copies ITERATIONS x BYTES from device 0 to a buffer of its own on device 1 with
// cudaMemcpyPeer, without enabling peer access: the driver then stages each copy through host
// memory, and CUPTI reports a DtoH and an HtoD copy of BYTES (2 x ITERATIONS host_staged copies),
// which is what really moved. (With cudaDeviceEnablePeerAccess(1, 0) first, the copies failed
// with "unspecified launch failure" on the H200 test machine, profiled or not.)
// Then per rank: cudaIpcGetMemHandle of its buffer (1 get_handle), MPI_Sendrecv of the handles; then
// twice (open, ITERATIONS copies of BYTES from its own buffer into the peer's mapped buffer,
// close): ipc_events has 2 opens of the same handle (open_number 1 and 2) and 2 closes, and
// cuda_copies has 2 x ITERATIONS ipc copies of BYTES. MPI_Barrier after every copy.
#include "gpu_job.hpp"

#include <cstdlib>

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int rank = start.rank, size = start.size, devices = start.devices, iterations = start.iterations;
  const std::size_t bytes = start.amount;
  if (devices < 2) {
    std::fprintf(stderr, "ipc_peer_copy needs two GPUs\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const int device = rank % 2, peer = (rank + 1) % size;
  CUDA_CHECK(cudaSetDevice(device));
  char* buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, bytes));
  CUDA_CHECK(cudaMemset(buffer, rank, bytes));

  if (rank == 0) {
    char* on_other_device = nullptr;
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&on_other_device, bytes));
    CUDA_CHECK(cudaSetDevice(0));
    for (int i = 0; i < iterations; ++i) {
      CUDA_CHECK(cudaMemcpyPeer(on_other_device, 1, buffer, 0, bytes));
    }
    CUDA_CHECK(cudaFree(on_other_device));
  }
  cudaIpcMemHandle_t mine, theirs;
  CUDA_CHECK(cudaIpcGetMemHandle(&mine, buffer));
  MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, peer, 0, &theirs, sizeof theirs, MPI_BYTE, peer, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int round = 0; round < 2; ++round) {
    void* mapped = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&mapped, theirs, cudaIpcMemLazyEnablePeerAccess));
    for (int i = 0; i < iterations; ++i) {
      CUDA_CHECK(cudaMemcpy(mapped, buffer, bytes, cudaMemcpyDefault));
      MPI_Barrier(MPI_COMM_WORLD);
    }
    CUDA_CHECK(cudaIpcCloseMemHandle(mapped));
    MPI_Barrier(MPI_COMM_WORLD); // the peer's buffer stays alive until both closed
  }

  MPI_Barrier(MPI_COMM_WORLD);
  CUDA_CHECK(cudaFree(buffer));
  MPI_Finalize();
  return 0;
}
