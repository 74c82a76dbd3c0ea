#pragma once
// Offset of this rank's profiler clock from rank 0's, by ping-pong with rank 0.
#include "commlens/profiler/clock.hpp"
#include "mpi_header.hpp"

#include <cstdint>

namespace commlens::pmpi {

struct ClockSample {
  std::int64_t offset_ns = 0; // this rank's clock minus rank 0's
  std::uint64_t taken_ns = 0; // local profiler clock when measured
};

// Collective over comm: MPI_COMM_WORLD before the application communicates, else a duplicate of
// it, so the ping-pongs never match the application's messages. Rank 0 answers every other rank
// in turn; each rank keeps the round with the smallest round-trip time, whose midpoint error is
// smallest.
ClockSample measure_clock_offset(MPI_Comm comm, const TickConverter& clock);

// Linear drift between two samples, in ns of offset change per second (ppb).
double drift_ppb(const ClockSample& first, const ClockSample& second) noexcept;

} // namespace commlens::pmpi
