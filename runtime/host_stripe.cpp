#include "host_stripe.hpp"

#include "node_segment.hpp"

#include <cuda_runtime.h>
#include <sched.h>
#include <sys/mman.h>

#include <atomic>

namespace commlens::runtime {

struct alignas(64) HostStripe::Counters {
  std::atomic<std::uint64_t> staged;   // chunks this rank has put in its stages (all calls)
  std::atomic<std::uint64_t> consumed; // chunks of the peer's stages this rank has copied out
};

namespace {
constexpr std::size_t kCountersBytes = 2 * 64;
constexpr std::size_t kRingBytes = kStripeChunkBytes * kStripeStages;
} // namespace

HostStripe::Counters& HostStripe::counters(int rank) const noexcept {
  return static_cast<Counters*>(region_)[rank];
}

char* HostStripe::stage(int rank, std::uint64_t chunk) const noexcept {
  return static_cast<char*>(region_) + kCountersBytes + rank * kRingBytes +
         (chunk % kStripeStages) * kStripeChunkBytes;
}

bool HostStripe::open(MPI_Comm comm, int rank) {
  rank_ = rank;
  region_bytes_ = kCountersBytes + 2 * kRingBytes;
  region_ = pmpi::map_node_shared_memory(comm, rank, region_bytes_);
  int ok = region_ != nullptr ? 1 : 0;
  if (ok != 0) {
    registered_ = cudaHostRegister(region_, region_bytes_, cudaHostRegisterPortable) == cudaSuccess;
    cudaStream_t out = nullptr;
    cudaStream_t in = nullptr;
    ok = registered_ && cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking) == cudaSuccess &&
         cudaStreamCreateWithFlags(&in, cudaStreamNonBlocking) == cudaSuccess;
    copy_out_ = out;
    copy_in_ = in;
    for (int i = 0; ok != 0 && i < kStripeStages; ++i) {
      cudaEvent_t staged = nullptr;
      cudaEvent_t copied = nullptr;
      ok = cudaEventCreateWithFlags(&staged, cudaEventDisableTiming) == cudaSuccess &&
           cudaEventCreateWithFlags(&copied, cudaEventDisableTiming) == cudaSuccess;
      staged_[i] = staged;
      copied_[i] = copied;
    }
  }
  int everyone = 0;
  PMPI_Allreduce(&ok, &everyone, 1, MPI_INT, MPI_MIN, comm);
  return everyone != 0;
}

HostStripe::~HostStripe() {
  for (int i = 0; i < kStripeStages; ++i) {
    if (staged_[i] != nullptr) {
      cudaEventDestroy(static_cast<cudaEvent_t>(staged_[i]));
    }
    if (copied_[i] != nullptr) {
      cudaEventDestroy(static_cast<cudaEvent_t>(copied_[i]));
    }
  }
  for (void* stream : {copy_out_, copy_in_}) {
    if (stream != nullptr) {
      cudaStreamDestroy(static_cast<cudaStream_t>(stream));
    }
  }
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

// One polling loop drives four steps per chunk, each as soon as it may run: stage own chunk
// (when the peer has copied out what that stage held), publish it once its copy finished, copy
// the peer's staged chunk to the landing buffer, release the peer's stage once that copy finished.
// No kernel runs here: the caller's NVLink kernel may hold every SM, and a reduction queued behind
// it would stall the copies.
HostStripe::Exchange HostStripe::exchange(const void* input, std::size_t offset, std::size_t bytes) {
  const int peer = 1 - rank_;
  const std::uint64_t chunks = (bytes + kStripeChunkBytes - 1) / kStripeChunkBytes;
  const std::uint64_t base = chunks_before_;
  chunks_before_ += chunks;
  const auto chunk_bytes = [&](std::uint64_t chunk) {
    return chunk + 1 < chunks ? kStripeChunkBytes : bytes - chunk * kStripeChunkBytes;
  };
  const auto out_stream = static_cast<cudaStream_t>(copy_out_);
  const auto in_stream = static_cast<cudaStream_t>(copy_in_);
  Counters& mine = counters(rank_);
  Counters& theirs = counters(peer);
  // Every rank calls with the same bytes, so a failed allocation fails alike; it still moves its
  // chunks (the peer waits for them) and reports the error.
  int error = reserve_landing(bytes) ? 0 : static_cast<int>(cudaErrorMemoryAllocation);
  std::uint64_t put = 0, published = 0, fetched = 0, released = 0;
  while (released < chunks) {
    bool progressed = false;
    if (put < chunks && put < theirs.consumed.load(std::memory_order_acquire) - base + kStripeStages) {
      const int copy = cudaMemcpyAsync(stage(rank_, put),
                                       static_cast<const char*>(input) + offset + put * kStripeChunkBytes,
                                       chunk_bytes(put), cudaMemcpyDeviceToHost, out_stream);
      cudaEventRecord(static_cast<cudaEvent_t>(staged_[put % kStripeStages]), out_stream);
      error = error != 0 ? error : copy;
      ++put;
      progressed = true;
    }
    if (published < put &&
        cudaEventQuery(static_cast<cudaEvent_t>(staged_[published % kStripeStages])) != cudaErrorNotReady) {
      mine.staged.store(base + ++published, std::memory_order_release);
      progressed = true;
    }
    if (fetched < chunks && fetched < theirs.staged.load(std::memory_order_acquire) - base) {
      if (landing_ != nullptr) {
        const int copy = cudaMemcpyAsync(landing_ + fetched * kStripeChunkBytes, stage(peer, fetched),
                                         chunk_bytes(fetched), cudaMemcpyHostToDevice, in_stream);
        error = error != 0 ? error : copy;
      }
      cudaEventRecord(static_cast<cudaEvent_t>(copied_[fetched % kStripeStages]), in_stream);
      ++fetched;
      progressed = true;
    }
    if (released < fetched &&
        cudaEventQuery(static_cast<cudaEvent_t>(copied_[released % kStripeStages])) != cudaErrorNotReady) {
      mine.consumed.store(base + ++released, std::memory_order_release);
      progressed = true;
    }
    if (!progressed) {
      sched_yield();
    }
  }
  const int synchronised = cudaStreamSynchronize(in_stream);
  error = error != 0 ? error : synchronised;
  return {error, static_cast<std::uint32_t>(chunks), landing_};
}

} // namespace commlens::runtime
