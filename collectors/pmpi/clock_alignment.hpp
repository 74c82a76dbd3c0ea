#pragma once
// Offset of this rank's profiler clock from rank 0's, measured at MPI_Finalize, and the drift that
// carries it back to MPI_Init. Nothing is exchanged at MPI_Init: each rank
// only keeps its clock readings there (ProcessIdentity::mpi_init_ticks and mpi_init_ns).
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/profiler.hpp"
#include "finalize_topology.hpp"
#include "mpi_header.hpp"

#include <cstdint>
#include <functional>

namespace commlens::pmpi {

struct ClockSample {
  std::int64_t offset_ns = 0;     // this rank's clock minus rank 0's
  std::uint64_t taken_ns = 0;     // local profiler clock when measured
  std::int64_t root_rate_ppb = 0; // rank 0's rate_against_monotonic_ppb, sent with its replies
};

// How fast the profiler's clock (converted ticks) ran against CLOCK_MONOTONIC since `since`, in
// ns per second: the error of the tick rate calibrated at start-up. CLOCK_MONOTONIC is the same
// clock for every process of a host and is slewed, never stepped, by NTP across hosts, so two
// ranks' rates differ by how fast their clocks drift apart. 0 over less than 10 s, where the
// readings' own error (about 1 us) would pass for drift, or without the readings of MPI_Init.
std::int64_t rate_against_monotonic_ppb(const TickConverter& clock, ClockReading since);

// Collective over the topology's communicators (private duplicates: the application's receives
// may still be posted). The ranks of a host compare their clocks through the CLOCK_MONOTONIC they
// share, with no message; the hosts' lowest ranks ping-pong along a binomial tree
// (offset_along_tree), so that no rank serves every other: log2(hosts) rounds. Rank 0's rate
// (own_rate_ppb there) comes with one broadcast.
ClockSample measure_clock_offset(const FinalizeTopology& topology, const TickConverter& clock,
                                 std::int64_t own_rate_ppb);

// The offset of this member's clock (`now`, ns) from member 0's, collective over `members`. In
// round k the members whose index has k as its lowest set bit ping-pong their parent (the index
// less 2^k), keeping the exchange with the smallest round-trip time, whose midpoint error is
// smallest; then each parent hands its own offset from member 0 down, which its children add to
// theirs.
std::int64_t offset_along_tree(MPI_Comm members, const std::function<std::int64_t()>& now);

// The alignment the ranks table stores: the offset at MPI_Init (init_ns, on the profiler's
// scale), from the sample at finalize moved back along the drift between this rank and rank 0.
ClockAlignment alignment_at_init(const ClockSample& sample, std::int64_t own_rate_ppb, std::uint64_t init_ns);

} // namespace commlens::pmpi
