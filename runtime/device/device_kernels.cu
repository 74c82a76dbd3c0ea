// Reduction and copy kernels. Memory-bound: 16-byte loads when every pointer is 16-byte aligned,
// a grid-stride loop sized to the GPU, loads from all sources issued before they are combined.
#include "device/device_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace commlens::runtime {

namespace {

constexpr int kThreads = 512;

struct Sum {
  template <typename T> __device__ static T apply(T a, T b) { return a + b; }
};
struct Prod {
  template <typename T> __device__ static T apply(T a, T b) { return a * b; }
};
struct Min {
  template <typename T> __device__ static T apply(T a, T b) { return b < a ? b : a; }
};
struct Max {
  template <typename T> __device__ static T apply(T a, T b) { return a < b ? b : a; }
};
struct LogicalAnd {
  template <typename T> __device__ static T apply(T a, T b) { return T((a != T(0)) && (b != T(0))); }
};
struct LogicalOr {
  template <typename T> __device__ static T apply(T a, T b) { return T((a != T(0)) || (b != T(0))); }
};
struct LogicalXor {
  template <typename T> __device__ static T apply(T a, T b) { return T((a != T(0)) != (b != T(0))); }
};
struct BitAnd {
  template <typename T> __device__ static T apply(T a, T b) { return a & b; }
};
struct BitOr {
  template <typename T> __device__ static T apply(T a, T b) { return a | b; }
};
struct BitXor {
  template <typename T> __device__ static T apply(T a, T b) { return a ^ b; }
};

template <typename T> union Pack {
  uint4 raw;
  T elements[16 / sizeof(T)];
};

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
    Pack<T> result = loaded[0];
#pragma unroll
    for (int s = 1; s < kMaxRanks; ++s) {
      if (s < sources.count) {
#pragma unroll
        for (std::size_t e = 0; e < kPerPack; ++e) {
          result.elements[e] = Op::apply(result.elements[e], loaded[s].elements[e]);
        }
      }
    }
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

// The arithmetic and min/max ops, the ones every numeric type takes (16-bit floats only these).
template <typename T>
int launch_arithmetic_op(ReduceOp op, const SourceList& sources, const DestinationList& outs,
                         std::size_t elements, cudaStream_t stream) {
  switch (op) {
  case ReduceOp::Sum:
    return launch_typed<T, Sum>(sources, outs, elements, stream);
  case ReduceOp::Prod:
    return launch_typed<T, Prod>(sources, outs, elements, stream);
  case ReduceOp::Min:
    return launch_typed<T, Min>(sources, outs, elements, stream);
  case ReduceOp::Max:
    return launch_typed<T, Max>(sources, outs, elements, stream);
  default:
    return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <typename T>
int launch_for_op(ReduceOp op, const SourceList& sources, const DestinationList& outs, std::size_t elements,
                  cudaStream_t stream) {
  constexpr bool floating = std::is_floating_point_v<T>;
  switch (op) {
  case ReduceOp::LogicalAnd:
    return launch_typed<T, LogicalAnd>(sources, outs, elements, stream);
  case ReduceOp::LogicalOr:
    return launch_typed<T, LogicalOr>(sources, outs, elements, stream);
  case ReduceOp::LogicalXor:
    return launch_typed<T, LogicalXor>(sources, outs, elements, stream);
  default:
    break;
  }
  if constexpr (!floating) {
    switch (op) {
    case ReduceOp::BitAnd:
      return launch_typed<T, BitAnd>(sources, outs, elements, stream);
    case ReduceOp::BitOr:
      return launch_typed<T, BitOr>(sources, outs, elements, stream);
    case ReduceOp::BitXor:
      return launch_typed<T, BitXor>(sources, outs, elements, stream);
    default:
      break;
    }
  }
  return launch_arithmetic_op<T>(op, sources, outs, elements, stream);
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
  switch (reduction.type) {
  case ElementType::Int8:
    return launch_for_op<std::int8_t>(reduction.op, sources, outs, elements, s);
  case ElementType::UInt8:
  case ElementType::Bool:
    return launch_for_op<std::uint8_t>(reduction.op, sources, outs, elements, s);
  case ElementType::Int16:
    return launch_for_op<std::int16_t>(reduction.op, sources, outs, elements, s);
  case ElementType::UInt16:
    return launch_for_op<std::uint16_t>(reduction.op, sources, outs, elements, s);
  case ElementType::Int32:
    return launch_for_op<std::int32_t>(reduction.op, sources, outs, elements, s);
  case ElementType::UInt32:
    return launch_for_op<std::uint32_t>(reduction.op, sources, outs, elements, s);
  case ElementType::Int64:
    return launch_for_op<std::int64_t>(reduction.op, sources, outs, elements, s);
  case ElementType::UInt64:
    return launch_for_op<std::uint64_t>(reduction.op, sources, outs, elements, s);
  case ElementType::Float32:
    return launch_for_op<float>(reduction.op, sources, outs, elements, s);
  case ElementType::Float64:
    return launch_for_op<double>(reduction.op, sources, outs, elements, s);
  case ElementType::Float16:
    return launch_arithmetic_op<__half>(reduction.op, sources, outs, elements, s);
  case ElementType::BFloat16:
    return launch_arithmetic_op<__nv_bfloat16>(reduction.op, sources, outs, elements, s);
  }
  return static_cast<int>(cudaErrorInvalidValue);
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
