#include "clock_alignment.hpp"

#include "commlens/profiler/clock.hpp"

#include <array>
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

std::int64_t rate_against_monotonic_ppb(const TickConverter& clock, ClockReading since) {
  constexpr std::uint64_t kMinimumNs = 10'000'000'000;
  if (since.ticks == 0 || since.ns == 0) {
    return 0;
  }
  const ClockReading now = read_clocks();
  const auto monotonic_elapsed = static_cast<double>(now.ns - since.ns);
  if (now.ns - since.ns < kMinimumNs) {
    return 0;
  }
  const auto profiler_elapsed =
      static_cast<double>(static_cast<std::int64_t>(clock.to_ns(now.ticks) - clock.to_ns(since.ticks)));
  return static_cast<std::int64_t>((profiler_elapsed - monotonic_elapsed) / monotonic_elapsed * 1e9);
}

// Times are read on the profiler's own scale (converted TSC ticks), the scale of every stored
// event, so the offsets map exactly what the database holds.
ClockSample measure_clock_offset(MPI_Comm comm, const TickConverter& clock, std::int64_t own_rate_ppb) {
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const int rounds = rounds_for(size);
  ClockSample sample{0, clock.now_ns(), own_rate_ppb};
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      for (int round = 0; round < rounds; ++round) {
        std::uint64_t asked = 0;
        PMPI_Recv(&asked, 1, MPI_UINT64_T, peer, kTag, comm, MPI_STATUS_IGNORE);
        const std::array<std::int64_t, 2> reply{static_cast<std::int64_t>(clock.now_ns()), own_rate_ppb};
        PMPI_Send(reply.data(), 2, MPI_INT64_T, peer, kTag, comm);
      }
    }
    return sample;
  }
  std::uint64_t best_round_trip = std::numeric_limits<std::uint64_t>::max();
  for (int round = 0; round < rounds; ++round) {
    std::array<std::int64_t, 2> reply{};
    const std::uint64_t sent = clock.now_ns();
    PMPI_Send(&sent, 1, MPI_UINT64_T, 0, kTag, comm);
    PMPI_Recv(reply.data(), 2, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    const std::uint64_t received = clock.now_ns();
    sample.root_rate_ppb = reply[1];
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      sample.offset_ns = static_cast<std::int64_t>(sent + (received - sent) / 2) - reply[0];
      sample.taken_ns = received;
    }
  }
  return sample;
}

ClockAlignment alignment_at_init(const ClockSample& sample, std::int64_t own_rate_ppb,
                                 std::uint64_t init_ns) {
  const auto drift_ppb = static_cast<double>(own_rate_ppb - sample.root_rate_ppb);
  const auto seconds_since_init =
      static_cast<double>(static_cast<std::int64_t>(sample.taken_ns - init_ns)) / 1e9;
  return {sample.offset_ns - static_cast<std::int64_t>(drift_ppb * seconds_since_init), drift_ppb};
}

} // namespace commlens::pmpi
