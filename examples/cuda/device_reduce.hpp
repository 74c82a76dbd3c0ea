#pragma once
// MPI_Reduce calls whose user-defined op does CUDA work first: with an MPI that is not CUDA-aware,
// the one way to make CUDA calls inside an MPI call, so the tests can check that what the op
// launched carries that MPI_Reduce's id. The op sums kReduceFloats floats on the host after
// `stage` ran on their bytes; MPI_Reduce of two ranks applies it once per call, on one of them.
#include "gpu_job.hpp"

#include <cstddef>
#include <vector>

inline constexpr int kReduceFloats = 256;
inline constexpr std::size_t kReduceBytes = kReduceFloats * sizeof(float);

using DeviceStage = void (*)(void* host_operand, std::size_t bytes);

namespace device_reduce_detail {
inline DeviceStage stage = nullptr;
inline int invocations = 0;

inline void staged_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  stage(in, static_cast<std::size_t>(*length) * sizeof(float));
  auto* a = static_cast<float*>(in);
  auto* b = static_cast<float*>(inout);
  for (int i = 0; i < *length; ++i) {
    b[i] += a[i];
  }
  ++invocations;
}
} // namespace device_reduce_detail

// Runs `iterations` MPI_Reduce calls (root 0) with the staging op; prints and returns how often
// MPI applied the op on this rank ("rank R op_invocations N", which the tests read).
inline int reduce_through_device(int rank, int iterations, DeviceStage stage) {
  device_reduce_detail::stage = stage;
  device_reduce_detail::invocations = 0;
  MPI_Op op;
  MPI_Op_create(device_reduce_detail::staged_sum, 1, &op);
  std::vector<float> values(kReduceFloats, 1.0f), sums(kReduceFloats, 0.0f);
  for (int i = 0; i < iterations; ++i) {
    MPI_Reduce(values.data(), sums.data(), kReduceFloats, MPI_FLOAT, op, 0, MPI_COMM_WORLD);
  }
  MPI_Op_free(&op);
  std::printf("rank %d op_invocations %d\n", rank, device_reduce_detail::invocations);
  std::fflush(stdout);
  return device_reduce_detail::invocations;
}
