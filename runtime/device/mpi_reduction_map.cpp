#include "device/mpi_reduction_map.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace commlens::runtime {

namespace {

// MPI's handles are link-time constants in Open MPI and compile-time ones in MPICH: compared at
// run time, never used as case labels. LP64: long and unsigned long are 64-bit.
const std::pair<MPI_Datatype, ElementType>* type_table(std::size_t* size) noexcept {
  static const std::array kTypes = std::to_array<std::pair<MPI_Datatype, ElementType>>({
      {MPI_SIGNED_CHAR, ElementType::Int8},     {MPI_INT8_T, ElementType::Int8},
      {MPI_UNSIGNED_CHAR, ElementType::UInt8},  {MPI_UINT8_T, ElementType::UInt8},
      {MPI_BYTE, ElementType::UInt8},           {MPI_SHORT, ElementType::Int16},
      {MPI_INT16_T, ElementType::Int16},        {MPI_UNSIGNED_SHORT, ElementType::UInt16},
      {MPI_UINT16_T, ElementType::UInt16},      {MPI_INT, ElementType::Int32},
      {MPI_INT32_T, ElementType::Int32},        {MPI_UNSIGNED, ElementType::UInt32},
      {MPI_UINT32_T, ElementType::UInt32},      {MPI_LONG, ElementType::Int64},
      {MPI_LONG_LONG, ElementType::Int64},      {MPI_INT64_T, ElementType::Int64},
      {MPI_UNSIGNED_LONG, ElementType::UInt64}, {MPI_UNSIGNED_LONG_LONG, ElementType::UInt64},
      {MPI_UINT64_T, ElementType::UInt64},      {MPI_FLOAT, ElementType::Float32},
      {MPI_DOUBLE, ElementType::Float64},       {MPI_C_BOOL, ElementType::Bool},
  // MPICH 4 names the 16-bit floats; Open MPI 4.1 does not (there the datatype-name hint below).
#ifdef MPIX_C_FLOAT16
      {MPIX_C_FLOAT16, ElementType::Float16},
#endif
#ifdef MPIX_BFLOAT16
      {MPIX_BFLOAT16, ElementType::BFloat16},
#endif
  });
  *size = kTypes.size();
  return kTypes.data();
}

const std::pair<MPI_Op, ReduceOp>* op_table(std::size_t* size) noexcept {
  static const std::array kOps = std::to_array<std::pair<MPI_Op, ReduceOp>>({
      {MPI_SUM, ReduceOp::Sum},
      {MPI_PROD, ReduceOp::Prod},
      {MPI_MIN, ReduceOp::Min},
      {MPI_MAX, ReduceOp::Max},
      {MPI_LAND, ReduceOp::LogicalAnd},
      {MPI_LOR, ReduceOp::LogicalOr},
      {MPI_LXOR, ReduceOp::LogicalXor},
      {MPI_BAND, ReduceOp::BitAnd},
      {MPI_BOR, ReduceOp::BitOr},
      {MPI_BXOR, ReduceOp::BitXor},
  });
  *size = kOps.size();
  return kOps.data();
}

template <typename Handle, typename Value>
std::optional<Value> look_up(const std::pair<Handle, Value>* table, std::size_t size,
                             Handle handle) noexcept {
  for (std::size_t i = 0; i < size; ++i) {
    if (table[i].first == handle) {
      return table[i].second;
    }
  }
  return std::nullopt;
}

constexpr std::string_view kHintPrefix = "commlens:";
constexpr std::pair<std::string_view, ElementType> kHintTypes[] = {{"float16", ElementType::Float16},
                                                                   {"bfloat16", ElementType::BFloat16}};
constexpr std::pair<std::string_view, ReduceOp> kHintOps[] = {
    {"sum", ReduceOp::Sum}, {"prod", ReduceOp::Prod}, {"min", ReduceOp::Min}, {"max", ReduceOp::Max}};

// "commlens:float16:sum" -> {Float16, Sum}; empty (and *why set) for anything else.
std::optional<Reduction> hinted_reduction(MPI_Datatype datatype, const char** why) noexcept {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  if (PMPI_Type_get_name(datatype, name, &length) != MPI_SUCCESS ||
      !std::string_view(name, static_cast<std::size_t>(length)).starts_with(kHintPrefix)) {
    return std::nullopt;
  }
  const std::string_view hint =
      std::string_view(name, static_cast<std::size_t>(length)).substr(kHintPrefix.size());
  const std::size_t colon = hint.find(':');
  const std::string_view op_name =
      colon == std::string_view::npos ? std::string_view{} : hint.substr(colon + 1);
  const auto type = look_up(kHintTypes, std::size(kHintTypes), hint.substr(0, colon));
  const auto op = look_up(kHintOps, std::size(kHintOps), op_name);
  if (!type || !op) {
    *why = "datatype hint not understood (commlens:float16|bfloat16:sum|prod|min|max)";
    return std::nullopt;
  }
  int bytes = 0;
  PMPI_Type_size(datatype, &bytes);
  if (bytes != 2) {
    *why = "datatype hint names a 16-bit float but the datatype is not 2 bytes";
    return std::nullopt;
  }
  return Reduction{*type, *op};
}

} // namespace

std::optional<Reduction> reduction_for(MPI_Datatype datatype, MPI_Op op, const char** why) noexcept {
  std::size_t size = 0;
  const auto* types = type_table(&size);
  const auto type = look_up(types, size, datatype);
  const auto* ops = op_table(&size);
  const char* hint_problem = nullptr;
  if (!type && !look_up(ops, size, op) && datatype != MPI_DATATYPE_NULL) {
    if (auto hinted = hinted_reduction(datatype, &hint_problem)) {
      return hinted;
    }
  }
  if (!type) {
    *why = hint_problem != nullptr ? hint_problem
                                   : "datatype not supported (derived, pair or unlisted predefined type)";
    return std::nullopt;
  }
  const auto reduce = look_up(ops, size, op);
  if (!reduce) {
    *why = "operation not supported (user-defined or MPI_REPLACE/MPI_NO_OP/MPI_MINLOC/MPI_MAXLOC)";
    return std::nullopt;
  }
  if (!op_applies(*reduce, *type)) {
    *why = "operation not defined for this datatype";
    return std::nullopt;
  }
  return Reduction{*type, *reduce};
}

} // namespace commlens::runtime
