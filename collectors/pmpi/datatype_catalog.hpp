#pragma once
// Names for the datatypes calls use: MPI's predefined types by their standard names, every other
// (derived) type as "derived". The catalogue is the same list on every rank, so its indexes are
// equal across ranks and the merged database needs no remapping.
#include "mpi_header.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::pmpi {

// Builds the handle lookup (after MPI_Init: predefined handles may be set up by MPI_Init).
void start_datatype_catalog();
// Names by index, starting at index 1 (0 means "no datatype").
std::vector<std::string> datatype_names();
struct PredefinedDatatype {
  std::uint8_t index;
  std::uint64_t size; // bytes, measured once at start: predefined types never change
};
// The catalogue entry of a predefined type; null for MPI_DATATYPE_NULL and derived types.
const PredefinedDatatype* find_predefined_datatype(MPI_Datatype type) noexcept;
// The catalogue index every derived type is stored under.
std::uint8_t derived_datatype_index() noexcept;

} // namespace commlens::pmpi
