#pragma once
// The element types and operations the runtime's kernels reduce, and how MPI's predefined
// datatypes and operations map onto them. Everything else (user-defined ops, derived types, pairs
// such as MPI_DOUBLE_INT) goes to the baseline, except 16-bit floats, which MPI has no type for:
// those are named by a datatype hint (mpi_reduction_map.hpp).
#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

enum class ElementType : std::uint8_t {
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64,
  Bool,
  Float16, // IEEE binary16 (__half)
  BFloat16 // bfloat16 (__nv_bfloat16)
};
enum class ReduceOp : std::uint8_t {
  Sum,
  Prod,
  Min,
  Max,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitAnd,
  BitOr,
  BitXor
};

struct Reduction {
  ElementType type;
  ReduceOp op;
};

std::size_t element_size(ElementType type) noexcept;
bool is_floating(ElementType type) noexcept;
// The combinations MPI defines (MPI-4.1 section 6.9.2): arithmetic and min/max on integers and
// floats, logical ops on integers and C_BOOL, bitwise ops on integers; 16-bit floats take the
// arithmetic and min/max ops, as MPICH's MPIX_C_FLOAT16 does.
bool op_applies(ReduceOp op, ElementType type) noexcept;

} // namespace commlens::runtime
