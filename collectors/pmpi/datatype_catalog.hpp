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
// The catalogue index of a datatype: 0 for MPI_DATATYPE_NULL, the "derived" index for user types.
std::uint8_t datatype_index(MPI_Datatype type) noexcept;

} // namespace commlens::pmpi
