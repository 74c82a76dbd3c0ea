#include "device/reduction_types.hpp"

namespace commlens::runtime {

std::size_t element_size(ElementType type) noexcept {
  switch (type) {
  case ElementType::Int8:
  case ElementType::UInt8:
  case ElementType::Bool:
    return 1;
  case ElementType::Int16:
  case ElementType::UInt16:
  case ElementType::Float16:
  case ElementType::BFloat16:
    return 2;
  case ElementType::Int32:
  case ElementType::UInt32:
  case ElementType::Float32:
    return 4;
  case ElementType::Int64:
  case ElementType::UInt64:
  case ElementType::Float64:
    return 8;
  }
  return 0;
}

bool is_floating(ElementType type) noexcept {
  return type == ElementType::Float32 || type == ElementType::Float64 || type == ElementType::Float16 ||
         type == ElementType::BFloat16;
}

bool op_applies(ReduceOp op, ElementType type) noexcept {
  const bool boolean = type == ElementType::Bool;
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Prod:
  case ReduceOp::Min:
  case ReduceOp::Max:
    return !boolean;
  case ReduceOp::LogicalAnd:
  case ReduceOp::LogicalOr:
  case ReduceOp::LogicalXor:
    return !is_floating(type);
  case ReduceOp::BitAnd:
  case ReduceOp::BitOr:
  case ReduceOp::BitXor:
    return !is_floating(type) && !boolean;
  }
  return false;
}

} // namespace commlens::runtime
