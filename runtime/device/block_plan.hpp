#pragma once
// Where each block of a data-movement collective comes from and goes to, as byte offsets into the
// ranks' published buffers (an input and an output per rank, agreement.hpp): pure arithmetic on
// arguments equal on every rank, with no MPI or CUDA, so the CPU tests check it.
//   allgather: rank s's input (its sendbuf, or its block of recvbuf in place) -> block s of every
//              output; gather: the same into the root's output only; scatter: block d of the root's
//              input -> rank d's output; alltoall: block d of rank s's input -> block s of rank d's
//              output; reduce_scatter(_block): rank d's slice of every input, reduced, -> d's output.
// A rank's own block in place is already where it belongs and is not copied.
#include "data_movement_rules.hpp"

#include <cstdint>
#include <span>

namespace commlens::runtime::movement {

using tuning::Collective;

inline constexpr int kMaxPlanRanks = 8; // device/device_kernels.hpp's kMaxRanks

struct CallGeometry {
  Collective collective = Collective::Allgather;
  int ranks = 2;
  int root = 0;                  // gather and scatter
  bool in_place = false;         // MPI_IN_PLACE where the collective allows it
  std::uint64_t block_bytes = 0; // one rank's block (copies), or one element's bytes times count
  // reduce_scatter: every rank's element count (reduce_scatter_block: all block_bytes / element)
  std::span<const int> counts = {};
  std::size_t element_bytes = 1; // reductions
};

// One copy from `source`'s input into `destination`'s output.
struct BlockCopy {
  int source = 0;
  std::uint64_t source_offset = 0;
  int destination = 0;
  std::uint64_t destination_offset = 0;
  std::uint64_t bytes = 0;
};

// The copies into `destination`'s output, at most kMaxPlanRanks, sources starting after the
// destination and wrapping round (rank d reads d+1 first), so that ranks copying at the same time
// read different peers. Returns how many it wrote into `copies`. Reductions have none.
int copies_into(const CallGeometry& call, int destination, std::span<BlockCopy, kMaxPlanRanks> copies);

// Whether the collective reduces (reduce_scatter and reduce_scatter_block) rather than copies.
constexpr bool reduces(Collective collective) noexcept {
  return collective == Collective::ReduceScatterBlock || collective == Collective::ReduceScatter;
}

// Whether `rank` has an input or an output in the call (MPI ignores the others' buffers there; a
// reduce_scatter rank whose count is 0 has no output).
bool has_input(const CallGeometry& call, int rank);
bool has_output(const CallGeometry& call, int rank);

// The bytes of `rank`'s input the collective reads (0: none): one block (allgather, gather), a
// block per rank (the scatter's root, alltoall, reduce_scatter_block), or every count
// (reduce_scatter).
std::uint64_t input_bytes(const CallGeometry& call, int rank);

// A reduction's slice for `destination`: its first element in every input and its element count.
struct Slice {
  std::uint64_t first = 0;
  std::uint64_t elements = 0;
};
Slice reduction_slice(const CallGeometry& call, int destination);

// Bit p set: the collective, run for `destinations` (bit d: rank d's output), reads rank p's input.
std::uint32_t inputs_read(const CallGeometry& call, std::uint32_t destinations);

} // namespace commlens::runtime::movement
