#include "transport/host_stripe.hpp"

#include "transport/node_segment.hpp"

#include <cuda_runtime.h>
#include <sched.h>
#include <sys/mman.h>

namespace commlens::runtime {

namespace {
constexpr std::size_t kCountersBytes = 2 * sizeof(StageRingCounters);
} // namespace

StageRing HostStripe::ring(int rank) const noexcept {
  return {static_cast<StageRingCounters*>(region_) + rank,
          static_cast<char*>(region_) + kCountersBytes + static_cast<std::size_t>(rank) * kStageRingBytes};
}

bool HostStripe::open(MPI_Comm comm, int rank) {
  rank_ = rank;
  region_bytes_ = kCountersBytes + 2 * kStageRingBytes;
  region_ = contract::map_node_shared_memory(comm, rank, region_bytes_);
  int ok = region_ != nullptr ? 1 : 0;
  if (ok != 0) {
    registered_ = cudaHostRegister(region_, region_bytes_, cudaHostRegisterPortable) == cudaSuccess;
    ok = registered_ && out_.open() && in_.open();
  }
  int everyone = 0;
  PMPI_Allreduce(&ok, &everyone, 1, MPI_INT, MPI_MIN, comm);
  return everyone != 0;
}

HostStripe::~HostStripe() {
  if (landing_ != nullptr) {
    cudaFree(landing_);
  }
  if (registered_) {
    cudaHostUnregister(region_);
  }
  if (region_ != nullptr) {
    munmap(region_, region_bytes_);
  }
}

bool HostStripe::reserve_landing(std::size_t bytes) {
  if (bytes <= landing_bytes_) {
    return true;
  }
  if (landing_ != nullptr) {
    cudaFree(landing_);
  }
  landing_bytes_ = 0;
  if (cudaMalloc(reinterpret_cast<void**>(&landing_), bytes) != cudaSuccess) {
    landing_ = nullptr;
    return false;
  }
  landing_bytes_ = bytes;
  return true;
}

// Both ranks write their share into their own ring and read the peer's; the loop ends when this
// rank's chunks are all staged (the peer reads them) and the peer's all landed.
HostStripe::Exchange HostStripe::exchange(const void* input, std::size_t offset, std::size_t bytes) {
  // Every rank calls with the same bytes, so a failed allocation fails alike; it still moves its
  // chunks (the peer waits for them) and reports the error.
  const bool landed = reserve_landing(bytes);
  StageTransfer out =
      StageTransfer::writer(ring(rank_), out_, static_cast<const char*>(input) + offset, bytes);
  StageTransfer in = StageTransfer::reader(ring(1 - rank_), in_, landed ? landing_ : nullptr, bytes);
  while (!out.done() || !in.done()) {
    const bool wrote = out.step();
    if (!in.step() && !wrote) {
      sched_yield();
    }
  }
  int error = landed ? 0 : static_cast<int>(cudaErrorMemoryAllocation);
  error = error != 0 ? error : out.cuda_error();
  error = error != 0 ? error : in.cuda_error();
  return {error, in.chunks(), landing_};
}

} // namespace commlens::runtime
