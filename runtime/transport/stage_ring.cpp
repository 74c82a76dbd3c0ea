#include "transport/stage_ring.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

CopyLane::~CopyLane() {
  for (void* event : events_) {
    if (event != nullptr) {
      cudaEventDestroy(static_cast<cudaEvent_t>(event));
    }
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
}

bool CopyLane::open() {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  stream_ = stream;
  for (void*& slot : events_) {
    cudaEvent_t event = nullptr;
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    slot = event;
  }
  return true;
}

StageTransfer::StageTransfer(const StageRing& ring, const CopyLane& lane, char* device, std::size_t bytes,
                             bool writes)
    : ring_(ring), lane_(&lane), device_(device), bytes_(bytes), writes_(writes),
      // The previous transfer through this ring ended with every chunk staged and consumed.
      base_((writes ? ring.counters->staged : ring.counters->consumed).load(std::memory_order_acquire)),
      chunks_((bytes + kStageChunkBytes - 1) / kStageChunkBytes) {
  if (writes) {
    ring.counters->writer_error.store(0, std::memory_order_relaxed); // published with the chunks
  }
}

StageTransfer StageTransfer::writer(const StageRing& ring, const CopyLane& lane, const void* source,
                                    std::size_t bytes) {
  return {ring, lane, static_cast<char*>(const_cast<void*>(source)), bytes, true};
}

StageTransfer StageTransfer::reader(const StageRing& ring, const CopyLane& lane, void* destination,
                                    std::size_t bytes) {
  return {ring, lane, static_cast<char*>(destination), bytes, false};
}

int StageTransfer::cuda_error() const noexcept {
  if (error_ != 0 || writes_ || !done()) {
    return error_;
  }
  return ring_.counters->writer_error.load(std::memory_order_relaxed);
}

std::size_t StageTransfer::chunk_bytes(std::uint64_t chunk) const noexcept {
  return chunk + 1 < chunks_ ? kStageChunkBytes : bytes_ - chunk * kStageChunkBytes;
}

// The writer fills a stage once the reader has released what it held (at most kStages chunks
// ahead) and publishes it when its copy is done; the reader copies a chunk out once it is
// published and releases the stage when that copy is done.
bool StageTransfer::step() {
  bool progressed = false;
  const auto stream = static_cast<cudaStream_t>(lane_->stream());
  const std::uint64_t may_issue = writes_ ? ring_.counters->consumed.load(std::memory_order_acquire) + kStages
                                          : ring_.counters->staged.load(std::memory_order_acquire);
  if (issued_ < chunks_ && base_ + issued_ < may_issue) {
    char* const stage = ring_.stage(base_ + issued_);
    if (device_ != nullptr) {
      char* const on_device = device_ + issued_ * kStageChunkBytes;
      const cudaError_t copied =
          writes_ ? cudaMemcpyAsync(stage, on_device, chunk_bytes(issued_), cudaMemcpyDeviceToHost, stream)
                  : cudaMemcpyAsync(on_device, stage, chunk_bytes(issued_), cudaMemcpyHostToDevice, stream);
      error_ = error_ != 0 ? error_ : static_cast<int>(copied);
    }
    cudaEventRecord(static_cast<cudaEvent_t>(lane_->event(base_ + issued_)), stream);
    ++issued_;
    progressed = true;
  }
  if (finished_ < issued_) {
    const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(lane_->event(base_ + finished_)));
    if (state != cudaErrorNotReady) {
      error_ = error_ != 0 ? error_ : static_cast<int>(state);
      if (writes_ && error_ != 0) {
        ring_.counters->writer_error.store(error_, std::memory_order_relaxed); // before the chunk's release
      }
      ++finished_;
      (writes_ ? ring_.counters->staged : ring_.counters->consumed)
          .store(base_ + finished_, std::memory_order_release);
      progressed = true;
    }
  }
  return progressed;
}

} // namespace commlens::runtime
