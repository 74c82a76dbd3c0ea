#pragma once
// The bytes a (count, datatype) message touches in its buffer, as runs of adjacent bytes in the
// order MPI packs them, decoded from the datatype's constructors (MPI_Type_get_envelope and
// MPI_Type_get_contents). A receive staged through a host image of its span writes back exactly
// these to the device, so bytes between the elements, which the program may change while the
// receive is pending (the rest of a matrix whose column is being received), stay as they are.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace commlens::runtime {

struct ByteRun {
  std::ptrdiff_t offset = 0; // from the buffer
  std::size_t length = 0;

  bool operator==(const ByteRun&) const = default;
};

// nullopt when a constructor cannot be decoded (MPI_Type_create_darray, Fortran types) or the
// message has more than max_runs runs.
std::optional<std::vector<ByteRun>> datatype_runs(int count, MPI_Datatype datatype, std::size_t max_runs);

// The first `bytes` bytes of the packed message: the runs that hold them, the last one cut.
std::vector<ByteRun> first_bytes(const std::vector<ByteRun>& runs, std::size_t bytes);

} // namespace commlens::runtime
