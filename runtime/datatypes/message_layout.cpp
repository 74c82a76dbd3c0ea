#include "datatypes/message_layout.hpp"

namespace commlens::runtime {

MessageLayout message_layout(int count, MPI_Datatype datatype) noexcept {
  MessageLayout layout;
  int size = 0;
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lower_bound = 0;
  MPI_Aint true_extent = 0;
  if (count < 0 || PMPI_Type_size(datatype, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(datatype, &lower_bound, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(datatype, &true_lower_bound, &true_extent) != MPI_SUCCESS || extent < 0 ||
      true_extent < 0) {
    return layout;
  }
  layout.supported = true;
  layout.bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
  layout.contiguous = lower_bound == 0 && true_lower_bound == 0 && extent == size && true_extent == size;
  if (count > 0) {
    layout.span_start = true_lower_bound;
    layout.span = static_cast<std::size_t>(count - 1) * static_cast<std::size_t>(extent) +
                  static_cast<std::size_t>(true_extent);
  }
  return layout;
}

bool contiguous_message(int count, MPI_Datatype datatype) noexcept {
  const MessageLayout layout = message_layout(count, datatype);
  return layout.supported && layout.contiguous;
}

std::uint64_t message_bytes(int count, MPI_Datatype datatype) noexcept {
  int type_bytes = 0;
  return count > 0 && PMPI_Type_size(datatype, &type_bytes) == MPI_SUCCESS && type_bytes > 0
             ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes)
             : 0;
}

} // namespace commlens::runtime
