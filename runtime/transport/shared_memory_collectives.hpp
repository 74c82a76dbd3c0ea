#pragma once
// Collectives through node shared memory, with no MPI and no GPU kernels: what the runtime's
// nonblocking collectives run on their lane when the ranks' agreement declines a call (a host or
// managed buffer on some rank, an unaligned buffer, a failed IPC open), so that the call completes
// without the calling thread, as MPI's progress rule requires (docs/runtime.md, "Nonblocking
// collectives"). Every rank of the communicator is on one node and maps the same stages
// (SharedStages); the data travel in chunks of at most kStageBytes per rank: each rank copies its
// chunk into its own stage, a barrier, each rank reads every stage, a barrier (a bcast's root alone
// copies in, and the others read its stage). Reductions fold the ranks' chunks in rank order (rank
// 0's, then rank 1's ...) on every rank, the order of the runtime's kernels and of the programs'
// host references, so every rank gets the same bits.
#include "datatypes/datatype_runs.hpp"
#include "device/reduction_types.hpp"
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace commlens::runtime {

inline constexpr std::size_t kStageBytes = std::size_t{256} << 10; // per rank and chunk

// Each rank's stage in node shared memory, for one communicator: a status word and kStageBytes of
// data. Mapped by open(), collectively; unmapped by the destructor.
class SharedStages {
public:
  SharedStages() = default;
  SharedStages(const SharedStages&) = delete;
  SharedStages& operator=(const SharedStages&) = delete;
  ~SharedStages();

  // Collective over comm (every rank on one node). False on every rank when any failed.
  bool open(MPI_Comm comm, int rank, int size);
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  unsigned char* data(int rank) const noexcept;
  std::int32_t& status(int rank) const noexcept; // nonzero: a copy of that rank's failed

private:
  unsigned char* region_ = nullptr;
  std::size_t bytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
};

// What a collective runs with: the stages, a barrier across every rank of the communicator, and
// how bytes move between a program's buffer (host, device or managed memory) and host memory,
// false on a failed copy.
struct StageContext {
  const SharedStages& stages;
  std::function<void()> barrier;
  std::function<bool(void* destination, const void* source, std::size_t bytes)> copy;
};

// A rank's message in its buffer: `bytes` packed bytes at `base`, contiguous, or where `runs`
// says (datatype_runs.hpp, offsets from base) when not empty.
struct PackedMessage {
  const void* base = nullptr;
  std::uint64_t bytes = 0;
  std::span<const ByteRun> runs = {};
};

// How a call went on every rank: all ranks return the same.
struct SharedMemoryResult {
  bool ok = true;               // false: some rank's copy failed (its outputs are undefined)
  bool declined = false;        // some rank could not describe its buffers: nothing was moved
  std::uint32_t chunks = 0;     // rounds through the stages
  std::uint64_t bytes_host = 0; // bytes this rank copied through host memory, in and out
};

// Allreduce of `count` elements: input (the output itself in place) to output.
SharedMemoryResult shared_memory_allreduce(const StageContext& context, const void* input, void* output,
                                           std::size_t count, Reduction reduction);
// Allgather: every rank's `input` (its block; equal byte counts on every rank) lands in block r of
// every rank's output, in rank order; block r starts at output + r * output_block_extent, laid out
// as `output_block` says (runs from the block's start, or contiguous when empty). `described`:
// false where this rank's datatypes could not be decoded into runs (then every rank declines);
// blocks of different sizes on different ranks fail the call on every rank.
SharedMemoryResult shared_memory_allgather(const StageContext& context, const PackedMessage& input,
                                           void* output, std::uint64_t output_block_extent,
                                           std::span<const ByteRun> output_block, bool described = true);
// Bcast: the root's message lands in every other rank's, each described as its rank's datatype
// says (`message`: the root's input, the others' output; equal packed byte counts on every rank,
// else the call fails on every rank). `described` as for the allgather. Chunks pass through the
// root's stage only.
SharedMemoryResult shared_memory_bcast(const StageContext& context, const PackedMessage& message, int root,
                                       bool described = true);
// Reduce-scatter: every rank's input holds the sum of `counts` elements; rank r's output gets
// elements [counts[0] + ... + counts[r-1], + counts[r]) reduced over every rank.
SharedMemoryResult shared_memory_reduce_scatter(const StageContext& context, const void* input, void* output,
                                                std::span<const int> counts, Reduction reduction);

} // namespace commlens::runtime
