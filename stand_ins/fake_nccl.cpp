// A stand-in for libnccl.so.2 on machines without GPU or NCCL: the same exported functions, which
// keep a communicator's rank and size and move no data (the tests check what commlens records, not
// what NCCL computes).
#include "fake_nccl.h"

#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

struct ncclComm {
  int rank;
  int size;
};

// One exported function calls another only where real NCCL does: ncclBcast calls ncclBroadcast
// through the dynamic linker, so the preloaded wrapper sees the inner call (and must record the
// outer one only). Otherwise the library is linked with -Bsymbolic and its calls stay inside it.
namespace {
constexpr ncclResult_t kSuccess = 0, kInvalidArgument = 4;

ncclResult_t create(ncclComm_t* comm, int nranks, int rank) {
  *comm = new ncclComm{rank, nranks};
  return kSuccess;
}
} // namespace

extern "C" {
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  std::memset(uniqueId, 0, sizeof *uniqueId);
  const long pid = getpid();
  std::memcpy(uniqueId->internal, &pid, sizeof pid);
  return kSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  return create(comm, nranks, rank);
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank, ncclConfig_t*) {
  return create(comm, nranks, rank);
}
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int*) {
  for (int i = 0; i < ndev; ++i)
    comm[i] = new ncclComm{i, ndev};
  return kSuccess;
}
// Every member splits with the same color and its rank as key: the child has the parent's shape.
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
  *newcomm = color < 0 ? nullptr : new ncclComm{key, comm->size};
  return kSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return kSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return ncclCommDestroy(comm);
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = comm->size;
  return kSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = comm->rank;
  return kSuccess;
}
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t) {
  return comm != nullptr ? kSuccess : kInvalidArgument;
}
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  using Broadcast =
      ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  static const auto broadcast = reinterpret_cast<Broadcast>(dlsym(RTLD_DEFAULT, "ncclBroadcast"));
  return broadcast != nullptr ? broadcast(buff, buff, count, datatype, root, comm, stream) : kSuccess;
}
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                        cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return kSuccess;
}
ncclResult_t ncclGroupStart() {
  return kSuccess;
}
ncclResult_t ncclGroupEnd() {
  return kSuccess;
}
}
