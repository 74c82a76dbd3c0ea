#pragma once
// The reduction operators, once for the device kernels (device_kernels.cu) and their host
// counterpart (transport/host_reduction.cpp), so both combine elements by the same expressions:
// the left operand is the accumulator, integers are promoted, combined and truncated back as C
// does, and min/max keep the left operand unless the right one compares strictly less (greater),
// so a NaN on the left stays and one on the right is passed over.
// Compiled by nvcc the operators are __host__ __device__; by a C++ compiler, plain inline
// functions. C++17, as the CUDA sources are.
#include "device/reduction_types.hpp"

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define COMMLENS_HOST_DEVICE __host__ __device__
#else
#define COMMLENS_HOST_DEVICE
#endif

namespace commlens::runtime::operators {

struct Sum {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return T(a + b); }
};
struct Prod {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return T(a * b); }
};
// Min and max select one of their operands; takes_right says which, so that 16-bit floats
// compared in a wider type on the host can keep the selected operand's own bits.
struct Min {
  template <typename T> COMMLENS_HOST_DEVICE static bool takes_right(T a, T b) { return b < a; }
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return takes_right(a, b) ? b : a; }
};
struct Max {
  template <typename T> COMMLENS_HOST_DEVICE static bool takes_right(T a, T b) { return a < b; }
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return takes_right(a, b) ? b : a; }
};
struct LogicalAnd {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) {
    return T((a != T(0)) && (b != T(0)));
  }
};
struct LogicalOr {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) {
    return T((a != T(0)) || (b != T(0)));
  }
};
struct LogicalXor {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) {
    return T((a != T(0)) != (b != T(0)));
  }
};
struct BitAnd {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return T(a & b); }
};
struct BitOr {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return T(a | b); }
};
struct BitXor {
  template <typename T> COMMLENS_HOST_DEVICE static T apply(T a, T b) { return T(a ^ b); }
};

// Which operators an element type takes: integers all of them, float and double the arithmetic,
// min/max and logical ones, 16-bit floats only the arithmetic and min/max ones.
enum class OperatorSet { Integer, Floating, Float16 };

template <typename T> constexpr OperatorSet operator_set_of() {
  return std::is_integral_v<T> ? OperatorSet::Integer : OperatorSet::Floating;
}

// visit(Operator{}) for the operator `op` names, if `Set` takes it; else `otherwise`. Host and
// device code both dispatch through it (the host kernels' launches, the resident kernel's steps).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <OperatorSet Set, typename Result, typename Visit>
COMMLENS_HOST_DEVICE Result visit_operator(ReduceOp op, Visit&& visit, Result otherwise) {
  switch (op) {
  case ReduceOp::Sum:
    return visit(Sum{});
  case ReduceOp::Prod:
    return visit(Prod{});
  case ReduceOp::Min:
    return visit(Min{});
  case ReduceOp::Max:
    return visit(Max{});
  default:
    break;
  }
  if constexpr (Set != OperatorSet::Float16) {
    switch (op) {
    case ReduceOp::LogicalAnd:
      return visit(LogicalAnd{});
    case ReduceOp::LogicalOr:
      return visit(LogicalOr{});
    case ReduceOp::LogicalXor:
      return visit(LogicalXor{});
    default:
      break;
    }
  }
  if constexpr (Set == OperatorSet::Integer) {
    switch (op) {
    case ReduceOp::BitAnd:
      return visit(BitAnd{});
    case ReduceOp::BitOr:
      return visit(BitOr{});
    case ReduceOp::BitXor:
      return visit(BitXor{});
    default:
      break;
    }
  }
  return otherwise;
}

// An element type as a value, with the operators it takes.
template <typename T, OperatorSet Set = operator_set_of<T>()> struct Element {
  using type = T;
  static constexpr OperatorSet operators = Set;
};

// visit(Element<T>{}) for the C++ type `type` stands for, the 16-bit floats as Half and BFloat16
// (the device's __half and __nv_bfloat16; the host's own stand-ins), or `otherwise` for a value
// outside the enumeration. Every kernel and the host reduction dispatch through it, so a new type
// is added in one place.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <typename Half, typename BFloat16, typename Result, typename Visit>
COMMLENS_HOST_DEVICE Result visit_element_type(ElementType type, Visit&& visit, Result otherwise) {
  switch (type) {
  case ElementType::Int8:
    return visit(Element<std::int8_t>{});
  case ElementType::UInt8:
  case ElementType::Bool:
    return visit(Element<std::uint8_t>{});
  case ElementType::Int16:
    return visit(Element<std::int16_t>{});
  case ElementType::UInt16:
    return visit(Element<std::uint16_t>{});
  case ElementType::Int32:
    return visit(Element<std::int32_t>{});
  case ElementType::UInt32:
    return visit(Element<std::uint32_t>{});
  case ElementType::Int64:
    return visit(Element<std::int64_t>{});
  case ElementType::UInt64:
    return visit(Element<std::uint64_t>{});
  case ElementType::Float32:
    return visit(Element<float>{});
  case ElementType::Float64:
    return visit(Element<double>{});
  case ElementType::Float16:
    return visit(Element<Half, OperatorSet::Float16>{});
  case ElementType::BFloat16:
    return visit(Element<BFloat16, OperatorSet::Float16>{});
  }
  return otherwise;
}

} // namespace commlens::runtime::operators
