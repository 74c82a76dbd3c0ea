// Two ranks on two GPUs, each copying between both GPUs inside its own process with peer access
// enabled: true peer-to-peer copies (CUPTI's PtoP records, over NVLink or PCIe).
// Usage: peer_copy ITERATIONS BYTES
// Rank r owns a buffer on device r and one on the other device o. It checks
// cudaDeviceCanAccessPeer(r, o), enables access to o from r, then makes ITERATIONS
// cudaMemcpyPeer copies of BYTES from device r to device o, outside MPI, with an MPI_Barrier after
// each. Then ITERATIONS MPI_Reduce calls (device_reduce.hpp) whose op copies its 1 KiB operand to
// device r, from there to device o (cudaMemcpyPeer, with that MPI_Reduce's id) and back to the
// host. Per rank: ITERATIONS + N peer copies (N = "op_invocations N" printed), ITERATIONS x BYTES
// + N KiB; 2 N host_staged copies of 1 KiB.
#include "device_reduce.hpp"

namespace {

int own_device = 0, other_device = 1;
void* op_buffer_here = nullptr;
void* op_buffer_there = nullptr;

void stage_across_devices(void* operand, std::size_t bytes) {
  CUDA_CHECK(cudaMemcpy(op_buffer_here, operand, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyPeer(op_buffer_there, other_device, op_buffer_here, own_device, bytes));
  CUDA_CHECK(cudaMemcpy(operand, op_buffer_here, bytes, cudaMemcpyDeviceToHost));
}

void* allocate_on(int device, std::size_t bytes) {
  void* buffer = nullptr;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaMalloc(&buffer, bytes));
  return buffer;
}

} // namespace

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int rank = start.rank, devices = start.devices, iterations = start.iterations;
  const std::size_t bytes = start.amount;
  if (devices < 2) {
    std::fprintf(stderr, "peer_copy needs two GPUs\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  own_device = rank % 2;
  other_device = 1 - own_device;
  void* there = allocate_on(other_device, bytes);
  op_buffer_there = allocate_on(other_device, kReduceBytes);
  void* here = allocate_on(own_device, bytes);
  op_buffer_here = allocate_on(own_device, kReduceBytes);
  CUDA_CHECK(cudaMemset(here, rank + 1, bytes));
  int can_access = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, own_device, other_device));
  if (can_access == 0) {
    std::fprintf(stderr, "peer_copy: device %d cannot access device %d\n", own_device, other_device);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  CUDA_CHECK(cudaDeviceEnablePeerAccess(other_device, 0));

  for (int i = 0; i < iterations; ++i) {
    CUDA_CHECK(cudaMemcpyPeer(there, other_device, here, own_device, bytes));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  reduce_through_device(rank, iterations, stage_across_devices);

  CUDA_CHECK(cudaFree(here));
  CUDA_CHECK(cudaFree(op_buffer_here));
  CUDA_CHECK(cudaSetDevice(other_device));
  CUDA_CHECK(cudaFree(there));
  CUDA_CHECK(cudaFree(op_buffer_there));
  MPI_Finalize();
  return 0;
}
