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
  region_ = map_node_shared_memory(comm, rank, region_bytes_);
  int ok = region_ != nullptr ? 1 : 0;
  if (ok != 0) {
    registered_ = cudaHostRegister(region_, region_bytes_, cudaHostRegisterPortable) == cudaSuccess;
    cudaStream_t out = nullptr;
    cudaStream_t in = nullptr;
    ok = registered_ && cudaMalloc(reinterpret_cast<void**>(&device_ring_), kRingBytes) == cudaSuccess &&
         cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking) == cudaSuccess &&
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
  if (device_ring_ != nullptr) {
    cudaFree(device_ring_);
  }
  if (registered_) {
    cudaHostUnregister(region_);
  }
  if (region_ != nullptr) {
    munmap(region_, region_bytes_);
  }
}

// One polling loop drives four steps per chunk, each as soon as it may run: stage own chunk
// (when the peer has copied out what that stage held), publish it once its copy finished, copy
// the peer's staged chunk in and reduce it (when the device ring has room), release the peer's
// stage once that copy finished.
HostStripe::Outcome HostStripe::reduce(Reduction reduction, const void* input, void* out, std::size_t offset,
                                       std::size_t bytes) {
  const int peer = 1 - rank_;
  const std::size_t element_bytes = element_size(reduction.type);
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
  std::uint64_t put = 0, published = 0, fetched = 0, released = 0;
  int error = 0;
  while (released < chunks && error == 0) {
    bool progressed = false;
    if (put < chunks && put < theirs.consumed.load(std::memory_order_acquire) - base + kStripeStages) {
      error = cudaMemcpyAsync(stage(rank_, put),
                              static_cast<const char*>(input) + offset + put * kStripeChunkBytes,
                              chunk_bytes(put), cudaMemcpyDeviceToHost, out_stream);
      error = error != 0
                  ? error
                  : cudaEventRecord(static_cast<cudaEvent_t>(staged_[put % kStripeStages]), out_stream);
      ++put;
      progressed = true;
    }
    if (published < put &&
        cudaEventQuery(static_cast<cudaEvent_t>(staged_[published % kStripeStages])) == cudaSuccess) {
      mine.staged.store(base + ++published, std::memory_order_release);
      progressed = true;
    }
    if (fetched < chunks && fetched < theirs.staged.load(std::memory_order_acquire) - base &&
        fetched < released + kStripeStages) {
      char* ring = device_ring_ + (fetched % kStripeStages) * kStripeChunkBytes;
      const std::size_t length = chunk_bytes(fetched);
      const std::size_t at = offset + fetched * kStripeChunkBytes;
      error = cudaMemcpyAsync(ring, stage(peer, fetched), length, cudaMemcpyHostToDevice, in_stream);
      error = error != 0
                  ? error
                  : cudaEventRecord(static_cast<cudaEvent_t>(copied_[fetched % kStripeStages]), in_stream);
      // Sources in rank order, as the NVLink part and the other rank reduce them.
      const void* own = static_cast<const char*>(input) + at;
      SourceList sources{{rank_ == 0 ? own : ring, rank_ == 0 ? ring : own}, 2};
      error = error != 0 ? error
                         : launch_reduce(reduction, sources, static_cast<char*>(out) + at,
                                         length / element_bytes, in_stream);
      ++fetched;
      progressed = true;
    }
    if (released < fetched &&
        cudaEventQuery(static_cast<cudaEvent_t>(copied_[released % kStripeStages])) == cudaSuccess) {
      mine.consumed.store(base + ++released, std::memory_order_release);
      progressed = true;
    }
    if (!progressed) {
      sched_yield();
    }
  }
  if (error == 0) {
    error = cudaStreamSynchronize(in_stream);
  } else {
    // A CUDA failure mid-way: let the peer's loop finish rather than wait forever; this rank
    // reports the error.
    mine.staged.store(base + chunks, std::memory_order_release);
    mine.consumed.store(base + chunks, std::memory_order_release);
  }
  return {error, static_cast<std::uint32_t>(chunks)};
}

} // namespace commlens::runtime
