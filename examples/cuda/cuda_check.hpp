#pragma once
// Aborts the job with the failing call named: the GPU examples must do exactly what their header
// says, or the tests that count their copies would compare against a pattern that did not run.
#include <cuda_runtime.h>
#include <mpi.h>

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

inline int parse_count(int argc, char** argv, int index, int fallback) {
  return argc > index ? std::atoi(argv[index]) : fallback;
}
