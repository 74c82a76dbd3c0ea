// Two ranks exchange device buffers through host memory, as an application must with an MPI that
// is not CUDA-aware. Usage: staged_exchange ITERATIONS BYTES [same-gpu]
// Per rank: one cudaMemset of BYTES (the send buffer, outside MPI). Per rank and iteration, inside
// an NVTX range "exchange" (default domain, push/pop): one DtoH copy of BYTES into pinned memory,
// MPI_Sendrecv of the host buffers, one HtoD copy of BYTES back (host_staged: 2 x ITERATIONS
// copies, 2 x ITERATIONS x BYTES). Then ITERATIONS DtoD copies of BYTES within the rank's GPU
// (same_device), outside MPI. Then, inside an NVTX range "reduce" (start/end), ITERATIONS
// MPI_Reduce calls (256 floats, device_reduce.hpp) whose op, per invocation, sets 1 KiB on the GPU
// (cudaMemsetAsync), waits for it (cudaStreamSynchronize) and stages the operand through the GPU
// (an HtoD and a DtoH copy of 1 KiB): one memset, one stream_synchronize and two copies, all with
// that MPI_Reduce's id. Each rank prints "op_invocations N". The program makes no other memset or
// synchronisation call.
// With "same-gpu" both ranks use device 0; otherwise rank r uses device r modulo the device count.
#include "device_reduce.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstring>

namespace {

void* op_device_buffer = nullptr;

void stage_through_device(void* operand, std::size_t bytes) {
  CUDA_CHECK(cudaMemsetAsync(op_device_buffer, 0, bytes));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  CUDA_CHECK(cudaMemcpy(op_device_buffer, operand, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(operand, op_device_buffer, bytes, cudaMemcpyDeviceToHost));
}

} // namespace

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int rank = start.rank, size = start.size, devices = start.devices, iterations = start.iterations;
  const std::size_t bytes = start.amount;
  const bool same_gpu = argc > 3 && std::strcmp(argv[3], "same-gpu") == 0;
  CUDA_CHECK(cudaSetDevice(same_gpu ? 0 : rank % devices));

  char *device_send = nullptr, *device_recv = nullptr, *host_send = nullptr, *host_recv = nullptr;
  CUDA_CHECK(cudaMalloc(&device_send, bytes));
  CUDA_CHECK(cudaMalloc(&device_recv, bytes));
  CUDA_CHECK(cudaMallocHost(&host_send, bytes));
  CUDA_CHECK(cudaMallocHost(&host_recv, bytes));
  CUDA_CHECK(cudaMalloc(&op_device_buffer, kReduceBytes));
  CUDA_CHECK(cudaMemset(device_send, rank + 1, bytes));
  const int peer = (rank + 1) % size;

  for (int i = 0; i < iterations; ++i) {
    nvtxRangePushA("exchange");
    CUDA_CHECK(cudaMemcpy(host_send, device_send, bytes, cudaMemcpyDeviceToHost));
    MPI_Sendrecv(host_send, static_cast<int>(bytes), MPI_BYTE, peer, 0, host_recv, static_cast<int>(bytes),
                 MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CUDA_CHECK(cudaMemcpy(device_recv, host_recv, bytes, cudaMemcpyHostToDevice));
    nvtxRangePop();
  }
  for (int i = 0; i < iterations; ++i) {
    CUDA_CHECK(cudaMemcpy(device_recv, device_send, bytes, cudaMemcpyDeviceToDevice));
  }

  const nvtxRangeId_t reduce_range = nvtxRangeStartA("reduce");
  reduce_through_device(rank, iterations, stage_through_device);
  nvtxRangeEnd(reduce_range);

  CUDA_CHECK(cudaFree(device_send));
  CUDA_CHECK(cudaFree(device_recv));
  CUDA_CHECK(cudaFree(op_device_buffer));
  CUDA_CHECK(cudaFreeHost(host_send));
  CUDA_CHECK(cudaFreeHost(host_recv));
  MPI_Finalize();
  return 0;
}
