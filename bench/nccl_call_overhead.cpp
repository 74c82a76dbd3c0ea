// Host time per ncclAllReduce (1 MiB of float32) and per ncclGroupStart/ncclSend/ncclGroupEnd,
// against the stand-in libnccl.so.2 of tests/nccl, which does no work: what remains is the call
// itself plus whatever a preloaded profiler adds. bench/nccl_overhead.sh runs it without and with
// libcommlens.so. Real NCCL spends several microseconds per launch on top.
//   nccl_call_overhead [iterations=1000000]
// Prints "<call> <ns per call>" lines.
#include "fake_nccl.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mpi.h>

namespace {
constexpr ncclDataType_t kFloat32 = 7;
constexpr ncclRedOp_t kSum = 0;

template <typename Body> double ns_per_call(long iterations, Body body) {
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) {
    body();
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(iterations);
}
} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  ncclCommInitRank(&comm, 1, id, 0);
  static float buffer[1 << 18];
  const auto allreduce = [&] { ncclAllReduce(buffer, buffer, 1 << 18, kFloat32, kSum, comm, nullptr); };
  const auto grouped_send = [&] {
    ncclGroupStart();
    ncclSend(buffer, 1024, kFloat32, 0, comm, nullptr);
    ncclGroupEnd();
  };
  ns_per_call(iterations / 10, allreduce); // warm-up
  const double allreduce_ns = ns_per_call(iterations, allreduce);
  const double group_ns = ns_per_call(iterations, grouped_send);
  std::printf("ncclAllReduce %.2f\nncclGroupStart+Send+End %.2f\n", allreduce_ns, group_ns);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
