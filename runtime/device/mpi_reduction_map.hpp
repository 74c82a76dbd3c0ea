#pragma once
// MPI_Datatype / MPI_Op -> the runtime's Reduction: predefined handles, and 16-bit floats named by
// a datatype hint. MPI (Open MPI 4.1, MPI-4.1) has no half or bfloat16 type, so programs reduce
// them with a 2-byte datatype and a user-defined op; naming that datatype
// "commlens:float16:OP" or "commlens:bfloat16:OP" (OP one of sum, prod, min, max) with
// MPI_Type_set_name tells the runtime what the op computes. The runtime then reduces such calls on
// the GPU; the baseline still runs the user's op, so a wrong hint shows as a difference between
// the two, never as a call MPI cannot run.
#include "device/reduction_types.hpp"
#include "mpi_header.hpp"

#include <optional>

namespace commlens::runtime {

// Empty when the runtime has no kernel for this pair; *why then names the reason.
// The hint is read (MPI_Type_get_name) only for a user-defined op on a non-predefined type.
std::optional<Reduction> reduction_for(MPI_Datatype datatype, MPI_Op op, const char** why) noexcept;

} // namespace commlens::runtime
