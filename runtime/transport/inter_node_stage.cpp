#include "transport/inter_node_stage.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace commlens::runtime {

namespace {
// Large enough that MPI's per-call cost is small against the chunk's transfer, small enough that
// the pipeline fills quickly (the first and last chunk's copies are not hidden).
constexpr std::size_t kChunkBytes = 4u << 20;
} // namespace

InterNodeStage::~InterNodeStage() {
  for (int slot = 0; slot < kSlots; ++slot) {
    for (void* event : {staged_[slot], landed_[slot]}) {
      if (event != nullptr) {
        cudaEventDestroy(static_cast<cudaEvent_t>(event));
      }
    }
  }
  for (void* stream : {copy_out_, copy_in_}) {
    if (stream != nullptr) {
      cudaStreamDestroy(static_cast<cudaStream_t>(stream));
    }
  }
  if (host_ != nullptr) {
    cudaFreeHost(host_);
  }
}

// Made on first use and kept; a failure leaves what was made for the next call to complete.
bool InterNodeStage::ready() {
  const auto make_stream = [](void** stream) {
    return *stream != nullptr || cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(stream),
                                                           cudaStreamNonBlocking) == cudaSuccess;
  };
  const auto make_event = [](void** event) {
    return *event != nullptr || cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(event),
                                                         cudaEventDisableTiming) == cudaSuccess;
  };
  bool made = make_stream(&copy_out_) && make_stream(&copy_in_);
  for (int slot = 0; slot < kSlots && made; ++slot) {
    made = make_event(&staged_[slot]) && make_event(&landed_[slot]);
  }
  if (made && host_ == nullptr) {
    void* host = nullptr;
    made = cudaMallocHost(&host, kSlots * kChunkBytes) == cudaSuccess;
    host_ = made ? static_cast<unsigned char*>(host) : nullptr;
  }
  return made;
}

// Per chunk c in slot c % 2: the node's reduction into the leader and the copy off the GPU
// (copy_out_), MPI_Allreduce in place on the host, copy back (copy_in_). Chunk c + 1 is reduced and
// copied off before chunk c's MPI call, once the copy back of chunk c - 1 (same slot) has left the
// slot; that copy back, and every one before it on copy_in_, is then announced.
BetweenNodes InterNodeStage::allreduce(void* data, int count, MPI_Datatype datatype, MPI_Op op,
                                       std::size_t element_bytes, MPI_Comm leaders, const NodeStages& node) {
  BetweenNodes result;
  // Every leader calls with the same count, so all take the same number of MPI calls even when one
  // could not set up: it still joins each call (with its unreduced data) and reports the error.
  result.cuda_error = ready() ? 0 : static_cast<int>(cudaErrorMemoryAllocation);
  const std::size_t chunk_elements = std::max<std::size_t>(1, kChunkBytes / element_bytes);
  const std::size_t elements = static_cast<std::size_t>(count);
  const std::size_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  const auto out = static_cast<cudaStream_t>(copy_out_);
  const auto in = static_cast<cudaStream_t>(copy_in_);
  auto* device = static_cast<unsigned char*>(data);
  const auto chunk_size = [&](std::size_t chunk) {
    return std::min(chunk_elements, elements - chunk * chunk_elements);
  };
  const auto stage = [&](std::size_t chunk) {
    const int slot = static_cast<int>(chunk % kSlots);
    int error = static_cast<int>(cudaEventSynchronize(static_cast<cudaEvent_t>(landed_[slot])));
    if (error == 0 && chunk >= kSlots) {
      node.announce((chunk - kSlots + 1) * chunk_elements);
    }
    const std::size_t first = chunk * chunk_elements;
    error = error != 0 ? error : node.reduce_into_leader(first, chunk_size(chunk), out);
    if (error == 0) {
      error = cudaMemcpyAsync(host_ + slot * kChunkBytes, device + first * element_bytes,
                              chunk_size(chunk) * element_bytes, cudaMemcpyDeviceToHost, out);
    }
    cudaEventRecord(static_cast<cudaEvent_t>(staged_[slot]), out);
    return error;
  };
  if (result.cuda_error == 0 && chunks > 0) {
    result.cuda_error = stage(0);
  }
  std::vector<unsigned char> unusable; // a leader without pinned memory still joins every MPI call
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const int slot = static_cast<int>(chunk % kSlots);
    void* host = host_ + slot * kChunkBytes;
    if (result.cuda_error == 0 && chunk + 1 < chunks) {
      result.cuda_error = stage(chunk + 1);
    }
    if (result.cuda_error == 0) {
      result.cuda_error = static_cast<int>(cudaEventSynchronize(static_cast<cudaEvent_t>(staged_[slot])));
    } else if (host_ == nullptr) {
      unusable.resize(chunk_elements * element_bytes);
      host = unusable.data();
    }
    const int rc =
        PMPI_Allreduce(MPI_IN_PLACE, host, static_cast<int>(chunk_size(chunk)), datatype, op, leaders);
    result.rc = result.rc != MPI_SUCCESS ? result.rc : rc;
    if (result.cuda_error == 0) {
      result.cuda_error = cudaMemcpyAsync(device + chunk * chunk_elements * element_bytes, host,
                                          chunk_size(chunk) * element_bytes, cudaMemcpyHostToDevice, in);
      cudaEventRecord(static_cast<cudaEvent_t>(landed_[slot]), in);
    }
  }
  if (result.cuda_error == 0) {
    result.cuda_error = static_cast<int>(cudaStreamSynchronize(in));
  }
  result.bytes_host = elements * element_bytes; // each way, as runtime_ops.bytes_host counts
  result.chunks = static_cast<std::uint32_t>(chunks);
  return result;
}

} // namespace commlens::runtime
