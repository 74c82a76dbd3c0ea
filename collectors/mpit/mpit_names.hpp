#pragma once
// MPI_T's enums and value encodings turned into what the database stores. MPI_T types stop here
// and in the three files that call MPI_T (pvar_catalog, cvar_snapshot, pvar_sampler).
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"

#include <cstddef>
#include <string>

namespace commlens::mpit {

const char* pvar_class_name(int pvar_class) noexcept;
const char* binding_name(int binding) noexcept;
const char* datatype_name(MPI_Datatype type) noexcept;
// "MPI_T_ERR_INVALID_INDEX (72)": MPI_T return codes have no MPI_T_Error_string in MPI 3.1.
std::string mpit_error_name(int code);

// Bytes one value of `type` takes (MPI_T allows only these predefined types); 0 if unknown.
std::size_t value_size(MPI_Datatype type) noexcept;
// Element `index` of a buffer MPI_T filled with values of `type`; NULL for types it cannot decode.
SqlValue decode_value(MPI_Datatype type, const unsigned char* buffer, int index) noexcept;
// The whole buffer as text (a cvar value): strings as they are, arrays comma-separated.
std::string value_text(MPI_Datatype type, const unsigned char* buffer, int count);

// Prints "commlens: rank R: <what> failed: <error>; <consequence>" the first time `what` fails on
// this rank, so a library without MPI_T support costs one line, not one per call.
void report_once(const Profiler& profiler, const std::string& what, int code, const char* consequence);

} // namespace commlens::mpit
