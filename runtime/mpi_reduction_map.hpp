#pragma once
// MPI_Datatype / MPI_Op -> the runtime's Reduction, for predefined handles only.
#include "mpi_header.hpp"
#include "reduction_types.hpp"

#include <optional>

namespace commlens::runtime {

// Empty when the runtime has no kernel for this pair; *why then names the reason.
std::optional<Reduction> reduction_for(MPI_Datatype datatype, MPI_Op op, const char** why) noexcept;

} // namespace commlens::runtime
