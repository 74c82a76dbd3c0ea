#include "datatype_catalog.hpp"

#include "handle_map.hpp"

#include <iterator>
#include <memory>

namespace commlens::pmpi {

namespace {

struct PredefinedType {
  MPI_Datatype handle;
  const char* name;
};

// Aliases (MPI_LONG_LONG and MPI_LONG_LONG_INT, say) share a handle; the first name listed wins.
const PredefinedType kPredefined[] = {
    {MPI_CHAR, "MPI_CHAR"},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"},
    {MPI_BYTE, "MPI_BYTE"},
    {MPI_WCHAR, "MPI_WCHAR"},
    {MPI_SHORT, "MPI_SHORT"},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
    {MPI_INT, "MPI_INT"},
    {MPI_UNSIGNED, "MPI_UNSIGNED"},
    {MPI_LONG, "MPI_LONG"},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG"},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
    {MPI_FLOAT, "MPI_FLOAT"},
    {MPI_DOUBLE, "MPI_DOUBLE"},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
    {MPI_C_BOOL, "MPI_C_BOOL"},
    {MPI_INT8_T, "MPI_INT8_T"},
    {MPI_INT16_T, "MPI_INT16_T"},
    {MPI_INT32_T, "MPI_INT32_T"},
    {MPI_INT64_T, "MPI_INT64_T"},
    {MPI_UINT8_T, "MPI_UINT8_T"},
    {MPI_UINT16_T, "MPI_UINT16_T"},
    {MPI_UINT32_T, "MPI_UINT32_T"},
    {MPI_UINT64_T, "MPI_UINT64_T"},
    {MPI_AINT, "MPI_AINT"},
    {MPI_OFFSET, "MPI_OFFSET"},
    {MPI_COUNT, "MPI_COUNT"},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"},
    {MPI_PACKED, "MPI_PACKED"},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT"},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
    {MPI_LONG_INT, "MPI_LONG_INT"},
    {MPI_2INT, "MPI_2INT"},
    {MPI_SHORT_INT, "MPI_SHORT_INT"},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
    {MPI_CHARACTER, "MPI_CHARACTER"},
    {MPI_INTEGER, "MPI_INTEGER"},
    {MPI_REAL, "MPI_REAL"},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION"},
    {MPI_LOGICAL, "MPI_LOGICAL"},
    {MPI_COMPLEX, "MPI_COMPLEX"},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX"},
};
constexpr auto kDerivedIndex = static_cast<std::uint8_t>(std::size(kPredefined) + 1);
static_assert(std::size(kPredefined) + 1 < 256, "datatype indexes must fit a byte");

std::unique_ptr<contract::HandleMap<PredefinedDatatype>> lookup;

} // namespace

void start_datatype_catalog() {
  lookup = std::make_unique<contract::HandleMap<PredefinedDatatype>>(4 * std::size(kPredefined));
  for (std::size_t index = 0; index < std::size(kPredefined); ++index) {
    const MPI_Datatype handle = kPredefined[index].handle;
    MPI_Count size = 0;
    if (handle == MPI_DATATYPE_NULL || lookup->find(contract::handle_key(handle)) != nullptr ||
        PMPI_Type_size_x(handle, &size) != MPI_SUCCESS || size < 0) {
      continue;
    }
    lookup->insert(contract::handle_key(handle), PredefinedDatatype{static_cast<std::uint8_t>(index + 1),
                                                                    static_cast<std::uint64_t>(size)});
  }
}

std::vector<std::string> datatype_names() {
  std::vector<std::string> names;
  for (const PredefinedType& type : kPredefined) {
    names.emplace_back(type.name);
  }
  names.emplace_back("derived");
  return names;
}

const PredefinedDatatype* find_predefined_datatype(MPI_Datatype type) noexcept {
  // Programs pass the same type call after call: the thread's last predefined type answers without
  // the hash and probe (a predefined handle never changes its entry, so the copy stays true).
  struct LastFound {
    MPI_Datatype handle;
    PredefinedDatatype entry;
  };
  static thread_local LastFound last __attribute__((tls_model("initial-exec"))) = {MPI_DATATYPE_NULL, {}};
  if (type == MPI_DATATYPE_NULL || lookup == nullptr) {
    return nullptr;
  }
  if (type == last.handle) {
    return &last.entry;
  }
  const auto* slot = lookup->find(contract::handle_key(type));
  if (slot == nullptr) {
    return nullptr;
  }
  last = {type, slot->value};
  return &last.entry;
}

std::uint8_t derived_datatype_index() noexcept {
  return kDerivedIndex;
}

} // namespace commlens::pmpi
