#include "clock_alignment.hpp"

#include "commlens/profiler/clock.hpp"

#include <array>
#include <limits>
#include <utility>

namespace commlens::pmpi {

namespace {
constexpr int kTag = 0x434C;
// Exchanges per pair: enough for a clean minimum on a quiet machine; a pair's exchanges are all
// the time its round takes, whatever the job's size.
constexpr int kRounds = 10;

// As a child of `parent`: this clock minus the parent's, from the exchange of least round trip.
std::int64_t ping_parent(MPI_Comm members, int parent, const std::function<std::int64_t()>& now) {
  std::int64_t best_round_trip = std::numeric_limits<std::int64_t>::max();
  std::int64_t offset = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::int64_t reply = 0;
    const std::int64_t sent = now();
    PMPI_Send(&sent, 1, MPI_INT64_T, parent, kTag, members);
    PMPI_Recv(&reply, 1, MPI_INT64_T, parent, kTag, members, MPI_STATUS_IGNORE);
    const std::int64_t received = now();
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      offset = sent + (received - sent) / 2 - reply;
    }
  }
  return offset;
}

void answer_child(MPI_Comm members, int child, const std::function<std::int64_t()>& now) {
  for (int round = 0; round < kRounds; ++round) {
    std::int64_t asked = 0;
    PMPI_Recv(&asked, 1, MPI_INT64_T, child, kTag, members, MPI_STATUS_IGNORE);
    const std::int64_t reply = now();
    PMPI_Send(&reply, 1, MPI_INT64_T, child, kTag, members);
  }
}

// This rank's profiler clock minus CLOCK_MONOTONIC, and the profiler time it was read at.
std::pair<std::int64_t, std::uint64_t> clock_against_monotonic(const TickConverter& clock) {
  const ClockReading reading = read_clocks();
  const std::uint64_t profiler_ns = clock.to_ns(reading.ticks);
  return {static_cast<std::int64_t>(profiler_ns - reading.ns), profiler_ns};
}

} // namespace

std::int64_t offset_along_tree(MPI_Comm members, const std::function<std::int64_t()>& now) {
  int index = 0;
  int size = 1;
  PMPI_Comm_rank(members, &index);
  PMPI_Comm_size(members, &size);
  int top = 0; // the rounds: 2^top >= size
  while ((1 << top) < size) {
    ++top;
  }
  std::int64_t to_parent = 0;
  for (int round = 0; round < top; ++round) {
    const int step = 1 << round;
    if ((index & (2 * step - 1)) == step) {
      to_parent = ping_parent(members, index - step, now);
    } else if ((index & (2 * step - 1)) == 0 && index + step < size) {
      answer_child(members, index + step, now);
    }
  }
  // Down the tree: a member's parent has a higher lowest set bit, so it knows its own offset first.
  std::int64_t to_root = 0;
  for (int round = top - 1; round >= 0; --round) {
    const int step = 1 << round;
    if ((index & (2 * step - 1)) == step) {
      std::int64_t parent_to_root = 0;
      PMPI_Recv(&parent_to_root, 1, MPI_INT64_T, index - step, kTag, members, MPI_STATUS_IGNORE);
      to_root = to_parent + parent_to_root;
    } else if ((index & (2 * step - 1)) == 0 && index + step < size) {
      PMPI_Send(&to_root, 1, MPI_INT64_T, index + step, kTag, members);
    }
  }
  return to_root;
}

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
ClockSample measure_clock_offset(const FinalizeTopology& topology, const TickConverter& clock,
                                 std::int64_t own_rate_ppb) {
  // Read once: the host's lowest rank's offset from itself is then exactly 0.
  const auto [mine, taken_ns] = clock_against_monotonic(clock);
  // [this host's lowest rank: its clock against CLOCK_MONOTONIC, its offset from rank 0]
  std::array<std::int64_t, 2> host_leader{mine, 0};
  if (topology.host_leaders() != MPI_COMM_NULL) {
    host_leader[1] = offset_along_tree(topology.host_leaders(),
                                       [&clock] { return static_cast<std::int64_t>(clock.now_ns()); });
  }
  PMPI_Bcast(host_leader.data(), 2, MPI_INT64_T, 0, topology.host());
  ClockSample sample;
  // Against the host's lowest rank at one instant: both clocks less the one CLOCK_MONOTONIC.
  sample.offset_ns = mine - host_leader[0] + host_leader[1];
  sample.taken_ns = taken_ns;
  sample.root_rate_ppb = own_rate_ppb;
  PMPI_Bcast(&sample.root_rate_ppb, 1, MPI_INT64_T, 0, topology.world());
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
