#pragma once
// Where a message (buffer, count, datatype) lies in memory: the bytes MPI moves, and the span from
// the first to the last byte the datatype touches. Device buffers are staged by copying that span,
// so every datatype works through the host path; only contiguous ones can go through a rendezvous.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

struct MessageLayout {
  bool supported = false;        // false: a negative extent or an error from MPI (left to MPI)
  bool contiguous = false;       // the bytes are the span, in order, starting at the buffer
  std::size_t bytes = 0;         // count x type size
  std::ptrdiff_t span_start = 0; // of the first byte touched, from the buffer (the true lower bound)
  std::size_t span = 0;          // bytes from the first to the last byte touched
};

MessageLayout message_layout(int count, MPI_Datatype datatype) noexcept;

// Whether `count` elements of `datatype` are a contiguous run of bytes (what the runtime copies).
bool contiguous_message(int count, MPI_Datatype datatype) noexcept;
// count x type size; 0 on an error or a negative count.
std::uint64_t message_bytes(int count, MPI_Datatype datatype) noexcept;

} // namespace commlens::runtime
