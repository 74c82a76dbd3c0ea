#pragma once
// What every MPI + CUDA program of the project starts with: the examples, the GPU test programs,
// the benchmarks and the tuning sweep. CUDA_CHECK aborts the job with the failing call named: a GPU
// program must do exactly what its header says, or the tests that count its copies would compare
// against a pattern that did not run.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                                                     \
  do {                                                                                                       \
    const cudaError_t check_result = (call);                                                                 \
    if (check_result != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                              \
                   cudaGetErrorString(check_result));                                                        \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                                          \
    }                                                                                                        \
  } while (0)

// The slowest rank's time of one collective call (it is done when its last rank is).
inline double slowest_rank(double seconds) {
  double worst = 0;
  MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

inline int parse_count(int argc, char** argv, int index, int fallback) {
  return argc > index ? std::atoi(argv[index]) : fallback;
}

// MPI initialised, this rank, the job size and the GPUs this process sees.
struct GpuJob {
  int rank = 0;
  int size = 1;
  int devices = 0;
};

inline GpuJob join_gpu_job(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  GpuJob job;
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  CUDA_CHECK(cudaGetDeviceCount(&job.devices));
  return job;
}

// What a GPU example starts with: MPI initialised, this rank and the job size, the two numbers on
// its command line (iterations, then a size: bytes or elements) and the visible GPUs.
struct ProgramStart {
  int rank = 0;
  int size = 1;
  int iterations = 10;
  std::size_t amount = 1 << 20;
  int devices = 0;
};

inline ProgramStart start_program(int* argc, char*** argv) {
  const GpuJob job = join_gpu_job(argc, argv);
  ProgramStart start;
  start.rank = job.rank;
  start.size = job.size;
  start.devices = job.devices;
  start.iterations = parse_count(*argc, *argv, 1, start.iterations);
  start.amount = static_cast<std::size_t>(parse_count(*argc, *argv, 2, static_cast<int>(start.amount)));
  return start;
}
