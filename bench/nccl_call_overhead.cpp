// Host time per ncclAllReduce (1 MiB of float32) and per ncclGroupStart/ncclSend/ncclGroupEnd.
// Built twice: nccl_call_overhead against the stand-in libnccl.so.2 of stand_ins/, which does no
// work (what remains is the call itself plus whatever a preloaded profiler adds), and
// nccl_call_overhead_real (COMMLENS_REAL_NCCL) against NCCL on one GPU: device buffers, one
// stream, a one-rank communicator (the group then sends to and receives from the rank itself),
// host time only: the stream is synchronised every kSyncEvery calls outside the timed part, so
// the figure is the enqueue cost the issue of each call adds (what a profiler's wrappers and
// CUDA callbacks add), not the device's time, and the launch queue never fills. bench/overhead.sh
// runs either without and with libcommlens.so.
//   nccl_call_overhead[_real] [iterations=1000000]
// Prints "<call> <ns per call>" lines.
#ifdef COMMLENS_REAL_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#else
#include "fake_nccl.h"
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mpi.h>

namespace {
constexpr ncclDataType_t kFloat32 = static_cast<ncclDataType_t>(7);
constexpr ncclRedOp_t kSum = static_cast<ncclRedOp_t>(0);
constexpr std::size_t kElements = 1 << 18;

#ifdef COMMLENS_REAL_NCCL
cudaStream_t stream = nullptr;
float* device_buffer() {
  float* buffer = nullptr;
  cudaStreamCreate(&stream);
  cudaMalloc(&buffer, 2 * kElements * sizeof(float));
  return buffer;
}
void wait_for_device() {
  cudaStreamSynchronize(stream);
}
#else
cudaStream_t stream = nullptr;
float* device_buffer() {
  static float buffer[2 * kElements];
  return buffer;
}
void wait_for_device() {}
#endif

constexpr long kSyncEvery = 64;

template <typename Body> double ns_per_call(long iterations, Body body) {
  using clock = std::chrono::steady_clock;
  clock::duration host_time{};
  for (long done = 0; done < iterations; done += kSyncEvery) {
    const long batch = iterations - done < kSyncEvery ? iterations - done : kSyncEvery;
    const auto start = clock::now();
    for (long i = 0; i < batch; ++i) {
      body();
    }
    host_time += clock::now() - start;
    wait_for_device();
  }
  return std::chrono::duration<double, std::nano>(host_time).count() / static_cast<double>(iterations);
}
} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  ncclCommInitRank(&comm, 1, id, 0);
  float* buffer = device_buffer();
  const auto allreduce = [&] { ncclAllReduce(buffer, buffer, kElements, kFloat32, kSum, comm, stream); };
  const auto grouped_send = [&] {
    ncclGroupStart();
    ncclSend(buffer, 1024, kFloat32, 0, comm, stream);
#ifdef COMMLENS_REAL_NCCL
    ncclRecv(buffer + kElements, 1024, kFloat32, 0, comm, stream); // NCCL pairs every send
#endif
    ncclGroupEnd();
  };
  ns_per_call(iterations / 10, allreduce); // warm-up
  const double allreduce_ns = ns_per_call(iterations, allreduce);
  const double group_ns = ns_per_call(iterations, grouped_send);
#ifdef COMMLENS_REAL_NCCL
  const char* group_label = "ncclGroupStart+Send+Recv+End";
#else
  const char* group_label = "ncclGroupStart+Send+End";
#endif
  std::printf("ncclAllReduce %.2f\n%s %.2f\n", allreduce_ns, group_label, group_ns);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
