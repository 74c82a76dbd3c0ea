// nccl_traffic_calls: NCCL calls with known counts over a communicator of all MPI ranks (unique id sent
// with MPI_Bcast) and a split of it, against the fake libnccl.so.2. Per rank r of p, kIterations
// times: ncclAllReduce 1000 float32; ncclBroadcast 256 int8 from root 1; ncclReduce 100 float64 to
// root 0; ncclAllGather 16 int32 each; ncclReduceScatter 8 float64 each; inside one group,
// ncclSend 10 float64 to r+1 and ncclRecv 10 float64 from r-1; ncclBcast 64 int32 from root 0;
// ncclAlltoAll 4 float32 per rank; ncclGather 8 int8 to root 1; ncclScatter 8 int64 from root 0.
// Then ncclCommSplit (color 0, key r), ncclAllReduce 32 int64 on the split, ncclCommDestroy of
// both, and ncclCommInitAll of two communicators of this process alone: ncclCommAbort of the
// first, ncclCommDestroy of the second.
// A shared library, so that a program can also load it with dlopen(RTLD_LOCAL) and NCCL with it.
#include "fake_nccl.h"

#include <cstdio>
#include <mpi.h>

namespace {
constexpr int kIterations = 3;
constexpr ncclDataType_t kInt8 = 0, kInt32 = 2, kInt64 = 4, kFloat32 = 7, kFloat64 = 8;
constexpr ncclRedOp_t kSum = 0;

int check(ncclResult_t result, const char* what) {
  if (result != 0) {
    std::fprintf(stderr, "nccl_traffic: %s returned %d\n", what, result);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
} // namespace

extern "C" __attribute__((visibility("default"))) void run_nccl_traffic() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclUniqueId id{};
  if (rank == 0)
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");

  static char buffer[1 << 16];
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int i = 0; i < kIterations; ++i) {
    check(ncclAllReduce(buffer, buffer, 1000, kFloat32, kSum, comm, nullptr), "ncclAllReduce");
    check(ncclBroadcast(buffer, buffer, 256, kInt8, 1, comm, nullptr), "ncclBroadcast");
    check(ncclReduce(buffer, buffer, 100, kFloat64, kSum, 0, comm, nullptr), "ncclReduce");
    check(ncclAllGather(buffer, buffer, 16, kInt32, comm, nullptr), "ncclAllGather");
    check(ncclReduceScatter(buffer, buffer, 8, kFloat64, kSum, comm, nullptr), "ncclReduceScatter");
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(buffer, 10, kFloat64, right, comm, nullptr), "ncclSend");
    check(ncclRecv(buffer, 10, kFloat64, left, comm, nullptr), "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
    check(ncclBcast(buffer, 64, kInt32, 0, comm, nullptr), "ncclBcast");
    check(ncclAlltoAll(buffer, buffer, 4, kFloat32, comm, nullptr), "ncclAlltoAll");
    check(ncclGather(buffer, buffer, 8, kInt8, 1, comm, nullptr), "ncclGather");
    check(ncclScatter(buffer, buffer, 8, kInt64, 0, comm, nullptr), "ncclScatter");
  }
  ncclComm_t half = nullptr;
  check(ncclCommSplit(comm, 0, rank, &half, nullptr), "ncclCommSplit");
  check(ncclAllReduce(buffer, buffer, 32, kInt64, kSum, half, nullptr), "ncclAllReduce");
  check(ncclCommDestroy(half), "ncclCommDestroy");
  check(ncclCommDestroy(comm), "ncclCommDestroy");
  ncclComm_t local[2] = {nullptr, nullptr};
  check(ncclCommInitAll(local, 2, nullptr), "ncclCommInitAll");
  check(ncclCommAbort(local[0]), "ncclCommAbort");
  check(ncclCommDestroy(local[1]), "ncclCommDestroy");
}
