#pragma once
// What examples/ring_pingpong.c calls on `ranks` ranks (an even number) in `iterations` iterations,
// per rank, function, peer and bytes: its header comment as a table.
#include "harness/call_table.hpp"

namespace commlens::integration {

namespace ring_pingpong {
inline constexpr std::int64_t kRingBytes = 256 * 4, kAcrossBytes = 1000 * 8, kPairBytes = 100 * 4;
// A send to MPI_PROC_NULL sends nothing: 0 bytes, whatever its count (5 MPI_INT).
inline constexpr std::int64_t kGatherBytes = 10 * 4, kProcNullBytes = 0;
} // namespace ring_pingpong

inline CallTable ring_pingpong_calls(int ranks, int iterations) {
  using namespace ring_pingpong;
  CallTable table;
  const int p = ranks, n = iterations;
  for (int r = 0; r < p; ++r) {
    const int right = (r + 1) % p, left = (r - 1 + p) % p, across = (r + p / 2) % p, pair = r ^ 1;
    table.add(r, "MPI_Send", kWorld, right, kRingBytes, 0, n);
    table.add(r, "MPI_Recv", kWorld, left, 0, kRingBytes, n);
    table.add(r, "MPI_Send", kWorld, across, kAcrossBytes, 0, n);
    table.add(r, "MPI_Recv", kWorld, across, 0, kAcrossBytes, n);
    table.add(r, "MPI_Sendrecv", kWorld, pair, kPairBytes, kPairBytes, n);
    if (r == 0)
      table.add(r, "MPI_Recv", kWorld, kAnySourcePeer, 0, kGatherBytes, n * (p - 1));
    else
      table.add(r, "MPI_Send", kWorld, 0, kGatherBytes, 0, n);
    table.add(r, "MPI_Send", kWorld, kProcNullPeer, kProcNullBytes, 0, n);
  }
  return table;
}

} // namespace commlens::integration
