// ITERATIONS ncclAllReduce calls of COUNT floats on a communicator of all ranks (one GPU each, or
// one rank on one GPU) bootstrapped over MPI (MPI_Bcast of the unique id), then one more whose
// result is checked. Usage: nccl_allreduce ITERATIONS COUNT [avg]
// With ncclSum every element ends equal to the number of ranks; with `avg` (ncclAvg) equal to 1.
// NCCL launches one AllReduce kernel per call per rank when there are several ranks; a single rank
// launches a kernel only for ncclAvg (a scaling by 1/ranks: NCCL's one-rank path), and nothing for
// an in-place ncclSum. "allreduce ok" is printed by rank 0 when the result is right.
#include "gpu_job.hpp"

#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#define NCCL_CHECK(call)                                                                                     \
  do {                                                                                                       \
    const ncclResult_t check_result = (call);                                                                \
    if (check_result != ncclSuccess) {                                                                       \
      std::fprintf(stderr, "%s failed: %s\n", #call, ncclGetErrorString(check_result));                      \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                                          \
    }                                                                                                        \
  } while (0)

int main(int argc, char** argv) {
  const ProgramStart start = start_program(&argc, &argv);
  const int rank = start.rank, size = start.size, devices = start.devices, iterations = start.iterations;
  const std::size_t count = start.amount;
  const bool average = argc > 3 && std::strcmp(argv[3], "avg") == 0;
  const ncclRedOp_t op = average ? ncclAvg : ncclSum;
  const float expected = average ? 1.0f : static_cast<float>(size);
  CUDA_CHECK(cudaSetDevice(rank % devices));

  ncclUniqueId id;
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, size, id, rank));

  float* data = nullptr;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaMalloc(&data, count * sizeof(float)));
  std::vector<float> ones(count, 1.0f);
  CUDA_CHECK(cudaMemcpy(data, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  for (int i = 0; i < iterations; ++i) {
    // Each call sums the previous result: after ITERATIONS calls every element is size^ITERATIONS;
    // resetting keeps the check simple, so copy the ones back in between.
    NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, op, comm, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(data, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  }
  NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, op, comm, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> result(count);
  CUDA_CHECK(cudaMemcpy(result.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (float value : result) {
    wrong += value != expected;
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(wrong == 0 ? "allreduce ok\n" : "allreduce WRONG\n");
  }
  NCCL_CHECK(ncclCommDestroy(comm));
  CUDA_CHECK(cudaFree(data));
  CUDA_CHECK(cudaStreamDestroy(stream));
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
