// Reduction and copy kernels. Memory-bound: 16-byte loads when every pointer is 16-byte aligned,
// a grid-stride loop sized to the GPU, loads from all sources issued before they are combined.
#include "device/device_kernels.hpp"

#include "device/reduction_operators.hpp"
#include "device/vector_pack.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace commlens::runtime {

namespace {

constexpr int kThreads = 512;

template <typename T, typename Op>
__global__ void reduce_kernel(SourceList sources, DestinationList outs, std::size_t elements,
                              bool vectorised) {
  constexpr std::size_t kPerPack = 16 / sizeof(T);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t packs = vectorised ? elements / kPerPack : 0;
  for (std::size_t p = first; p < packs; p += stride) {
    Pack<T> loaded[kMaxRanks];
#pragma unroll
    for (int s = 0; s < kMaxRanks; ++s) {
      if (s < sources.count) {
        loaded[s].raw = static_cast<const uint4*>(sources.pointers[s])[p];
      }
    }
    const Pack<T> result = combine_packs<T, Op>(loaded, sources.count);
    for (int d = 0; d < outs.count; ++d) {
      static_cast<uint4*>(outs.pointers[d])[p] = result.raw;
    }
  }
  for (std::size_t i = packs * kPerPack + first; i < elements; i += stride) {
    T value = static_cast<const T*>(sources.pointers[0])[i];
    for (int s = 1; s < sources.count; ++s) {
      value = Op::apply(value, static_cast<const T*>(sources.pointers[s])[i]);
    }
    for (int d = 0; d < outs.count; ++d) {
      static_cast<T*>(outs.pointers[d])[i] = value;
    }
  }
}

int grid_for(std::size_t work_items) {
  static int multiprocessors = [] {
    int device = 0;
    int count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return count > 0 ? count : 1;
  }();
  const std::size_t blocks = (work_items + kThreads - 1) / kThreads;
  const std::size_t most = std::size_t(multiprocessors) * 4;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > most ? most : blocks));
}

bool aligned16(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

template <typename T, typename Op>
int launch_typed(const SourceList& sources, const DestinationList& outs, std::size_t elements,
                 cudaStream_t stream) {
  bool vectorised = true;
  for (int s = 0; s < sources.count; ++s) {
    vectorised = vectorised && aligned16(sources.pointers[s]);
  }
  for (int d = 0; d < outs.count; ++d) {
    vectorised = vectorised && aligned16(outs.pointers[d]);
  }
  const std::size_t work = vectorised ? elements / (16 / sizeof(T)) + 1 : elements;
  reduce_kernel<T, Op><<<grid_for(work), kThreads, 0, stream>>>(sources, outs, elements, vectorised);
  return static_cast<int>(cudaGetLastError());
}

__global__ void copy_kernel(CopySegment segment, bool vectorised) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t packs = vectorised ? segment.bytes / 16 : 0;
  const auto* source = static_cast<const uint4*>(segment.source);
  auto* destination = static_cast<uint4*>(segment.destination);
  for (std::size_t p = first; p < packs; p += stride) {
    destination[p] = source[p];
  }
  const auto* source_bytes = static_cast<const unsigned char*>(segment.source);
  auto* destination_bytes = static_cast<unsigned char*>(segment.destination);
  for (std::size_t i = packs * 16 + first; i < segment.bytes; i += stride) {
    destination_bytes[i] = source_bytes[i];
  }
}

} // namespace

int launch_reduce(Reduction reduction, const SourceList& sources, const DestinationList& outs,
                  std::size_t elements, void* stream) noexcept {
  if (elements == 0) {
    return 0;
  }
  const auto s = static_cast<cudaStream_t>(stream);
  const int invalid = static_cast<int>(cudaErrorInvalidValue);
  // The kernel for the reduction's type and operator, if the type takes the operator.
  return operators::visit_element_type<__half, __nv_bfloat16>(
      reduction.type,
      [&](auto element) {
        using T = typename decltype(element)::type;
        return operators::visit_operator<decltype(element)::operators>(
            reduction.op,
            [&](auto operation) { return launch_typed<T, decltype(operation)>(sources, outs, elements, s); },
            invalid);
      },
      invalid);
}

int launch_copies(const CopySegment* segments, int count, void* stream) noexcept {
  const auto s = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < count; ++i) {
    if (segments[i].bytes == 0) {
      continue;
    }
    const bool vectorised = aligned16(segments[i].source) && aligned16(segments[i].destination);
    const std::size_t work = vectorised ? segments[i].bytes / 16 + 1 : segments[i].bytes;
    copy_kernel<<<grid_for(work), kThreads, 0, s>>>(segments[i], vectorised);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) {
      return static_cast<int>(error);
    }
  }
  return 0;
}

} // namespace commlens::runtime
