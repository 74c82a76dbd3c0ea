#include "transport/shared_memory_collectives.hpp"

#include "node_shared_memory.hpp"
#include "transport/host_reduction.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace commlens::runtime {

namespace {

// A rank's stage: its status word on a cache line of its own, then the data.
constexpr std::size_t kStatusBytes = 64;
constexpr std::size_t kRankBytes = kStatusBytes + kStageBytes;
constexpr std::int32_t kUndescribed = 2; // a status: this rank's buffers could not be described

// Every rank publishes whether its copies so far failed and arrives at a barrier; returns whether
// any rank's did (the same on every rank). The stages and statuses stay readable until the
// caller's next barrier.
bool staged_everywhere(const StageContext& context, bool failed) {
  const SharedStages& stages = context.stages;
  stages.status(stages.rank()) = failed ? 1 : 0;
  context.barrier();
  bool any = false;
  for (int rank = 0; rank < stages.size(); ++rank) {
    any = any || stages.status(rank) != 0;
  }
  return any;
}

// The same as a round of its own: whether any rank failed.
bool any_failed(const StageContext& context, bool failed) {
  const bool any = staged_everywhere(context, failed);
  context.barrier();
  return any;
}

// Copies the packed bytes [offset, offset + bytes) of a message between its buffer and `host`:
// to host when `into_host`, else from it. Contiguous messages are one copy, others one per run.
bool move_packed(const StageContext& context, const PackedMessage& message, std::uint64_t offset,
                 std::size_t bytes, unsigned char* host, bool into_host) {
  auto* const base = static_cast<unsigned char*>(const_cast<void*>(message.base));
  if (message.runs.empty()) {
    return into_host ? context.copy(host, base + offset, bytes) : context.copy(base + offset, host, bytes);
  }
  std::uint64_t packed = 0; // where the run starts in the packed message
  for (const ByteRun& run : message.runs) {
    const std::uint64_t first = std::max<std::uint64_t>(packed, offset);
    const std::uint64_t last = std::min<std::uint64_t>(packed + run.length, offset + bytes);
    if (first < last) {
      unsigned char* const place = base + run.offset + static_cast<std::ptrdiff_t>(first - packed);
      unsigned char* const staged = host + (first - offset);
      if (!(into_host ? context.copy(staged, place, last - first)
                      : context.copy(place, staged, last - first))) {
        return false;
      }
    }
    packed += run.length;
    if (packed >= offset + bytes) {
      break;
    }
  }
  return true;
}

// Before a data-movement collective moves anything: every rank publishes its message's packed
// byte count, whether it could describe its buffers and whether its own send and receive sizes
// match. MPI's type signatures make the counts equal; a program that breaks this would send the
// ranks round different numbers of chunks, so every rank checks first. Returns declined where
// some rank could not describe its buffers, not ok where any check failed (the same on every rank).
SharedMemoryResult agree_on_message(const StageContext& context, std::uint64_t bytes, bool described,
                                    bool sizes_match) {
  const SharedStages& stages = context.stages;
  SharedMemoryResult result;
  stages.status(stages.rank()) = !described ? kUndescribed : sizes_match ? 0 : 1;
  std::memcpy(stages.data(stages.rank()), &bytes, sizeof bytes);
  context.barrier();
  for (int rank = 0; rank < stages.size(); ++rank) {
    const std::int32_t status = stages.status(rank);
    result.declined = result.declined || status == kUndescribed;
    result.ok = result.ok && status == 0 && std::memcmp(stages.data(rank), stages.data(0), sizeof bytes) == 0;
  }
  context.barrier();
  return result;
}

// Folds every rank's staged elements [first, first + count) of the chunk in rank order into
// `accumulator`.
void fold_stages(const SharedStages& stages, std::size_t first, std::size_t count, Reduction reduction,
                 unsigned char* accumulator) {
  const std::size_t element = element_size(reduction.type);
  std::memcpy(accumulator, stages.data(0) + first * element, count * element);
  for (int rank = 1; rank < stages.size(); ++rank) {
    reduce_into(reduction, accumulator, stages.data(rank) + first * element, count);
  }
}

} // namespace

SharedStages::~SharedStages() {
  if (region_ != nullptr) {
    munmap(region_, bytes_);
  }
}

bool SharedStages::open(MPI_Comm comm, int rank, int size) {
  rank_ = rank;
  size_ = size;
  bytes_ = kRankBytes * static_cast<std::size_t>(size);
  region_ = static_cast<unsigned char*>(contract::map_node_shared_memory(comm, rank, bytes_));
  return region_ != nullptr;
}

unsigned char* SharedStages::data(int rank) const noexcept {
  return region_ + kRankBytes * static_cast<std::size_t>(rank) + kStatusBytes;
}

std::int32_t& SharedStages::status(int rank) const noexcept {
  return *reinterpret_cast<std::int32_t*>(region_ + kRankBytes * static_cast<std::size_t>(rank));
}

SharedMemoryResult shared_memory_allreduce(const StageContext& context, const void* input, void* output,
                                           std::size_t count, Reduction reduction) {
  const SharedStages& stages = context.stages;
  const std::size_t element = element_size(reduction.type);
  const std::size_t per_chunk = kStageBytes / element;
  std::vector<unsigned char> accumulator(std::min(count, per_chunk) * element);
  SharedMemoryResult result;
  bool failed = false;
  for (std::size_t first = 0; first < count; first += per_chunk) {
    const std::size_t elements = std::min(per_chunk, count - first);
    const std::size_t bytes = elements * element;
    failed = failed || !context.copy(stages.data(stages.rank()),
                                     static_cast<const unsigned char*>(input) + first * element, bytes);
    ++result.chunks;
    result.bytes_host += 2 * bytes;
    const bool any = staged_everywhere(context, failed);
    if (!any) {
      fold_stages(stages, 0, elements, reduction, accumulator.data());
    }
    context.barrier(); // every rank read the stages: they take the next chunk
    if (any) {
      break; // every rank saw the same statuses
    }
    // In place, this chunk of the input was staged before the result overwrites it.
    failed = !context.copy(static_cast<unsigned char*>(output) + first * element, accumulator.data(), bytes);
  }
  result.ok = !any_failed(context, failed);
  return result;
}

SharedMemoryResult shared_memory_allgather(const StageContext& context, const PackedMessage& input,
                                           void* output, std::uint64_t output_block_extent,
                                           std::span<const ByteRun> output_block, bool described) {
  const SharedStages& stages = context.stages;
  std::uint64_t received = 0;
  for (const ByteRun& run : output_block) {
    received += run.length;
  }
  SharedMemoryResult result =
      agree_on_message(context, input.bytes, described, output_block.empty() || received == input.bytes);
  if (!result.ok) {
    return result;
  }
  bool failed = false;
  for (std::uint64_t offset = 0; offset < input.bytes; offset += kStageBytes) {
    const std::size_t bytes =
        static_cast<std::size_t>(std::min<std::uint64_t>(kStageBytes, input.bytes - offset));
    failed = failed || !move_packed(context, input, offset, bytes, stages.data(stages.rank()), true);
    ++result.chunks;
    result.bytes_host += bytes * (1 + static_cast<std::uint64_t>(stages.size()));
    const bool any = staged_everywhere(context, failed);
    for (int rank = 0; rank < stages.size() && !any && !failed; ++rank) {
      const PackedMessage block{static_cast<unsigned char*>(output) +
                                    output_block_extent * static_cast<std::uint64_t>(rank),
                                input.bytes, output_block};
      failed = !move_packed(context, block, offset, bytes, stages.data(rank), false);
    }
    context.barrier(); // every rank read the stages: they take the next chunk
    if (any) {
      break;
    }
  }
  result.ok = !any_failed(context, failed);
  return result;
}

SharedMemoryResult shared_memory_bcast(const StageContext& context, const PackedMessage& message, int root,
                                       bool described) {
  const SharedStages& stages = context.stages;
  SharedMemoryResult result = agree_on_message(context, message.bytes, described, true);
  if (!result.ok) {
    return result;
  }
  const bool is_root = stages.rank() == root;
  bool failed = false;
  for (std::uint64_t offset = 0; offset < message.bytes; offset += kStageBytes) {
    const std::size_t bytes =
        static_cast<std::size_t>(std::min<std::uint64_t>(kStageBytes, message.bytes - offset));
    if (is_root) {
      failed = failed || !move_packed(context, message, offset, bytes, stages.data(root), true);
    }
    ++result.chunks;
    result.bytes_host += bytes; // the root's copy in, or this rank's copy out
    const bool any = staged_everywhere(context, failed);
    if (!is_root && !any && !failed) {
      failed = !move_packed(context, message, offset, bytes, stages.data(root), false);
    }
    context.barrier(); // every rank read the root's stage: it takes the next chunk
    if (any) {
      break;
    }
  }
  result.ok = !any_failed(context, failed);
  return result;
}

SharedMemoryResult shared_memory_reduce_scatter(const StageContext& context, const void* input, void* output,
                                                std::span<const int> counts, Reduction reduction) {
  const SharedStages& stages = context.stages;
  const std::size_t element = element_size(reduction.type);
  const std::size_t per_chunk = kStageBytes / element;
  std::size_t total = 0;
  std::size_t mine_first = 0; // this rank's block in the whole input
  for (int rank = 0; rank < static_cast<int>(counts.size()); ++rank) {
    mine_first += rank < stages.rank() ? static_cast<std::size_t>(counts[rank]) : 0;
    total += static_cast<std::size_t>(counts[rank]);
  }
  const std::size_t mine_last = mine_first + static_cast<std::size_t>(counts[stages.rank()]);
  std::vector<unsigned char> accumulator(std::min(total, per_chunk) * element);
  SharedMemoryResult result;
  bool failed = false;
  for (std::size_t first = 0; first < total; first += per_chunk) {
    const std::size_t elements = std::min(per_chunk, total - first);
    failed = failed ||
             !context.copy(stages.data(stages.rank()),
                           static_cast<const unsigned char*>(input) + first * element, elements * element);
    ++result.chunks;
    result.bytes_host += elements * element;
    const bool any = staged_everywhere(context, failed);
    // This chunk's part of this rank's block.
    const std::size_t from = std::max(first, mine_first);
    const std::size_t to = std::min(first + elements, mine_last);
    if (!any && from < to) {
      fold_stages(stages, from - first, to - from, reduction, accumulator.data());
    }
    context.barrier(); // every rank read the stages: they take the next chunk
    if (any) {
      break;
    }
    if (from < to) {
      failed = !context.copy(static_cast<unsigned char*>(output) + (from - mine_first) * element,
                             accumulator.data(), (to - from) * element);
      result.bytes_host += (to - from) * element;
    }
  }
  result.ok = !any_failed(context, failed);
  return result;
}

} // namespace commlens::runtime
