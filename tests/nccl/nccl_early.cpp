// nccl_early: NCCL before MPI_Init, or with no MPI at all, against the fake libnccl.so.2.
//   nccl_early            never calls MPI: ncclCommInitRank (1 rank), kIterations x
//                         ncclAllReduce 512 float32 with ncclMax on stream 0x10, then
//                         inside one group ncclSend and ncclRecv 6 int64 to and from itself on
//                         stream 0x20; ncclCommDestroy.
//   nccl_early --mpi      under mpirun: before MPI_Init ncclCommInitRank over all ranks (every
//                         rank builds the same unique id, as a file-based exchange would give it),
//                         ncclCommSplit of it (color 3) and ncclCommInitAll of 2 communicators;
//                         MPI_Init, kIterations x the allreduce above, one 256 float32 allreduce
//                         on the split and one on the second InitAll communicator, ncclCommSplit
//                         again (color 3: its second split), ncclCommInitAll of 1, every
//                         communicator destroyed, MPI_Finalize. Also before MPI_Init: a second
//                         ncclCommInitRank (another unique id), its ncclCommSplit (color 5) and
//                         its destruction; after MPI_Init one 128 float32 allreduce on that split.
#include "fake_nccl.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mpi.h>

namespace {
constexpr int kIterations = 4;
constexpr ncclDataType_t kInt64 = 4, kFloat32 = 7;
constexpr ncclRedOp_t kMax = 2;
const auto kAllReduceStream = reinterpret_cast<cudaStream_t>(0x10);
const auto kP2pStream = reinterpret_cast<cudaStream_t>(0x20);

void check(ncclResult_t result, const char* what) {
  if (result != 0) {
    std::fprintf(stderr, "nccl_early: %s returned %d\n", what, result);
    std::exit(1);
  }
}

int environment_number(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : 0;
}
} // namespace

int main(int argc, char** argv) {
  const bool with_mpi = argc > 1 && std::strcmp(argv[1], "--mpi") == 0;
  // Before MPI_Init the launcher's variables are all a process knows of its place.
  const int rank = with_mpi ? environment_number("OMPI_COMM_WORLD_RANK") : 0;
  const int size = with_mpi ? environment_number("OMPI_COMM_WORLD_SIZE") : 1;
  ncclUniqueId id{};
  std::memset(id.internal, 0x5a, sizeof id.internal);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
  ncclComm_t early_split = nullptr;
  ncclComm_t early_locals[2] = {};
  ncclComm_t orphan = nullptr;
  if (with_mpi) {
    check(ncclCommSplit(comm, 3, rank, &early_split, nullptr), "ncclCommSplit");
    check(ncclCommInitAll(early_locals, 2, nullptr), "ncclCommInitAll");
    ncclUniqueId doomed_id{};
    std::memset(doomed_id.internal, 0x3c, sizeof doomed_id.internal);
    ncclComm_t doomed = nullptr;
    check(ncclCommInitRank(&doomed, size, doomed_id, rank), "ncclCommInitRank");
    check(ncclCommSplit(doomed, 5, rank, &orphan, nullptr), "ncclCommSplit");
    check(ncclCommDestroy(doomed), "ncclCommDestroy"); // its split lives on
    MPI_Init(&argc, &argv);
  }
  static float buffer[1024];
  for (int i = 0; i < kIterations; ++i) {
    check(ncclAllReduce(buffer, buffer, 512, kFloat32, kMax, comm, kAllReduceStream), "ncclAllReduce");
  }
  if (with_mpi) {
    check(ncclAllReduce(buffer, buffer, 256, kFloat32, kMax, early_split, kAllReduceStream), "ncclAllReduce");
    check(ncclAllReduce(buffer, buffer, 256, kFloat32, kMax, early_locals[1], kAllReduceStream),
          "ncclAllReduce");
    check(ncclAllReduce(buffer, buffer, 128, kFloat32, kMax, orphan, kAllReduceStream), "ncclAllReduce");
    ncclComm_t later_split = nullptr;
    ncclComm_t later_local = nullptr;
    check(ncclCommSplit(comm, 3, rank, &later_split, nullptr), "ncclCommSplit");
    check(ncclCommInitAll(&later_local, 1, nullptr), "ncclCommInitAll");
    for (ncclComm_t created :
         {early_split, early_locals[0], early_locals[1], later_split, later_local, orphan}) {
      check(ncclCommDestroy(created), "ncclCommDestroy");
    }
  }
  if (!with_mpi) {
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(buffer, 6, kInt64, 0, comm, kP2pStream), "ncclSend");
    check(ncclRecv(buffer, 6, kInt64, 0, comm, kP2pStream), "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }
  check(ncclCommDestroy(comm), "ncclCommDestroy");
  if (with_mpi) {
    MPI_Finalize();
  }
  return 0;
}
