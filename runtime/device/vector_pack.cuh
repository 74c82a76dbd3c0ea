#pragma once
// 16 bytes of elements loaded and stored as one uint4, and their combination across ranks: shared
// by the device reduction kernels (device_kernels.cu) and the resident kernel's reduce steps
// (resident/resident_kernel.cuh), so both combine a pack in the same order.
#include <cuda_runtime.h>

namespace commlens::runtime {

template <typename T> union Pack {
  uint4 raw;
  T elements[16 / sizeof(T)];
};

// op over loaded[0 .. count), left to right (the same order on every rank, so floating-point
// results are bitwise equal everywhere), element by element. kSlots: the array's compile-time
// bound, so that the loop unrolls.
template <typename T, typename Op, int kSlots>
__device__ Pack<T> combine_packs(const Pack<T> (&loaded)[kSlots], int count) {
  Pack<T> result = loaded[0];
#pragma unroll
  for (int s = 1; s < kSlots; ++s) {
    if (s < count) {
#pragma unroll
      for (int e = 0; e < int(16 / sizeof(T)); ++e) {
        result.elements[e] = Op::apply(result.elements[e], loaded[s].elements[e]);
      }
    }
  }
  return result;
}

} // namespace commlens::runtime
