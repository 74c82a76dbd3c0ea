// Two ranks exchange device buffers through host memory, as an application must with an MPI that
// is not CUDA-aware. Usage: staged_exchange ITERATIONS BYTES [same-gpu]
// Per rank and iteration: one DtoH copy of BYTES into pinned memory, MPI_Sendrecv of the host
// buffers, one HtoD copy of BYTES back (host_staged: 2 x ITERATIONS copies, 2 x ITERATIONS x BYTES).
// Then ITERATIONS DtoD copies of BYTES within the rank's GPU (same_device), outside MPI.
// Then ITERATIONS MPI_Reduce calls (256 floats, root 0) with a user op that stages its operands
// through the GPU: an HtoD and a DtoH copy of 1 KiB per op invocation, made inside MPI_Reduce, so
// they carry that call's id. Each rank prints "op_invocations N" (how often MPI ran the op there).
// With "same-gpu" both ranks use device 0; otherwise rank r uses device r modulo the device count.
#include "cuda_check.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kReduceFloats = 256;
float* op_device_buffer = nullptr;
int op_invocations = 0;

void staged_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const std::size_t bytes = static_cast<std::size_t>(*length) * sizeof(float);
  CUDA_CHECK(cudaMemcpy(op_device_buffer, in, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(in, op_device_buffer, bytes, cudaMemcpyDeviceToHost));
  auto* a = static_cast<float*>(in);
  auto* b = static_cast<float*>(inout);
  for (int i = 0; i < *length; ++i) {
    b[i] += a[i];
  }
  ++op_invocations;
}

} // namespace

int main(int argc, char** argv) {
  const ExampleStart start = start_example(&argc, &argv);
  const int rank = start.rank, size = start.size, devices = start.devices, iterations = start.iterations;
  const std::size_t bytes = start.amount;
  const bool same_gpu = argc > 3 && std::strcmp(argv[3], "same-gpu") == 0;
  CUDA_CHECK(cudaSetDevice(same_gpu ? 0 : rank % devices));

  char *device_send = nullptr, *device_recv = nullptr, *host_send = nullptr, *host_recv = nullptr;
  CUDA_CHECK(cudaMalloc(&device_send, bytes));
  CUDA_CHECK(cudaMalloc(&device_recv, bytes));
  CUDA_CHECK(cudaMallocHost(&host_send, bytes));
  CUDA_CHECK(cudaMallocHost(&host_recv, bytes));
  CUDA_CHECK(cudaMalloc(&op_device_buffer, kReduceFloats * sizeof(float)));
  CUDA_CHECK(cudaMemset(device_send, rank + 1, bytes));
  const int peer = (rank + 1) % size;

  for (int i = 0; i < iterations; ++i) {
    CUDA_CHECK(cudaMemcpy(host_send, device_send, bytes, cudaMemcpyDeviceToHost));
    MPI_Sendrecv(host_send, static_cast<int>(bytes), MPI_BYTE, peer, 0, host_recv, static_cast<int>(bytes),
                 MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CUDA_CHECK(cudaMemcpy(device_recv, host_recv, bytes, cudaMemcpyHostToDevice));
  }
  for (int i = 0; i < iterations; ++i) {
    CUDA_CHECK(cudaMemcpy(device_recv, device_send, bytes, cudaMemcpyDeviceToDevice));
  }

  MPI_Op op;
  MPI_Op_create(staged_sum, 1, &op);
  std::vector<float> values(kReduceFloats, 1.0f), sums(kReduceFloats, 0.0f);
  for (int i = 0; i < iterations; ++i) {
    MPI_Reduce(values.data(), sums.data(), kReduceFloats, MPI_FLOAT, op, 0, MPI_COMM_WORLD);
  }
  MPI_Op_free(&op);
  std::printf("rank %d op_invocations %d\n", rank, op_invocations);
  std::fflush(stdout);

  CUDA_CHECK(cudaFree(device_send));
  CUDA_CHECK(cudaFree(device_recv));
  CUDA_CHECK(cudaFree(op_device_buffer));
  CUDA_CHECK(cudaFreeHost(host_send));
  CUDA_CHECK(cudaFreeHost(host_recv));
  MPI_Finalize();
  return 0;
}
