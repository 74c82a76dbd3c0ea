#include "clock_alignment.hpp"

#include "commlens/profiler/clock.hpp"

#include <limits>

namespace commlens::pmpi {

namespace {
constexpr int kTag = 0x434C;
// Enough rounds for a clean minimum on a quiet machine; fewer on large jobs, where rank 0 serves
// every rank one after the other.
int rounds_for(int size) {
  return size <= 64 ? 10 : size <= 1024 ? 4 : 2;
}
} // namespace

// Times are read on the profiler's own scale (converted TSC ticks), the scale of every stored
// event, so the offsets map exactly what the database holds.
ClockSample measure_clock_offset(MPI_Comm comm, const TickConverter& clock) {
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const int rounds = rounds_for(size);
  ClockSample sample{0, clock.now_ns()};
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      for (int round = 0; round < rounds; ++round) {
        std::uint64_t now = 0;
        PMPI_Recv(&now, 1, MPI_UINT64_T, peer, kTag, comm, MPI_STATUS_IGNORE);
        now = clock.now_ns();
        PMPI_Send(&now, 1, MPI_UINT64_T, peer, kTag, comm);
      }
    }
    return sample;
  }
  std::uint64_t best_round_trip = std::numeric_limits<std::uint64_t>::max();
  for (int round = 0; round < rounds; ++round) {
    std::uint64_t root_time = 0;
    const std::uint64_t sent = clock.now_ns();
    PMPI_Send(&sent, 1, MPI_UINT64_T, 0, kTag, comm);
    PMPI_Recv(&root_time, 1, MPI_UINT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    const std::uint64_t received = clock.now_ns();
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      sample.offset_ns =
          static_cast<std::int64_t>(sent + (received - sent) / 2) - static_cast<std::int64_t>(root_time);
      sample.taken_ns = received;
    }
  }
  return sample;
}

double drift_ppb(const ClockSample& first, const ClockSample& second) noexcept {
  // Over short runs the offset's measurement noise (about a microsecond) would pass for drift.
  constexpr double kMinimumSeconds = 10.0;
  const double seconds = static_cast<double>(second.taken_ns - first.taken_ns) / 1e9;
  return seconds >= kMinimumSeconds ? static_cast<double>(second.offset_ns - first.offset_ns) / seconds : 0.0;
}

} // namespace commlens::pmpi
