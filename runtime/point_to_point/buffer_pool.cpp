#include "buffer_pool.hpp"

#include <cuda_runtime.h>

#include <bit>

namespace commlens::runtime {

namespace {

// Powers of two up to 64 MiB, then whole 64 MiB steps: a 1 GiB message does not hold 2 GiB.
std::size_t size_class(std::size_t bytes) {
  constexpr std::size_t kSmallest = std::size_t{64} << 10;
  constexpr std::size_t kStep = std::size_t{64} << 20;
  if (bytes <= kStep) {
    return std::bit_ceil(bytes < kSmallest ? kSmallest : bytes);
  }
  return (bytes + kStep - 1) / kStep * kStep;
}

} // namespace

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = other.pool_;
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.pool_ = nullptr;
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  return *this;
}

void PooledBuffer::reset() noexcept {
  if (data_ != nullptr) {
    pool_->release(data_, capacity_);
  }
  pool_ = nullptr;
  data_ = nullptr;
  capacity_ = 0;
}

PooledBuffer BufferPool::acquire(std::size_t bytes) {
  const std::size_t capacity = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    if (const auto found = cached_.find({current_device(), capacity}); found != cached_.end()) {
      void* data = found->second;
      cached_.erase(found);
      cached_bytes_ -= capacity;
      return {this, data, capacity};
    }
  }
  void* data = nullptr;
  const cudaError_t error =
      memory_ == PoolMemory::PinnedHost ? cudaMallocHost(&data, capacity) : cudaMalloc(&data, capacity);
  if (error != cudaSuccess) {
    cudaGetLastError(); // an out-of-memory error must not stick to the application's next call
    return {};
  }
  return {this, data, capacity};
}

void BufferPool::release(void* data, std::size_t capacity) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (cached_bytes_ + capacity <= max_cached_) {
      cached_.emplace(std::pair{current_device(), capacity}, data);
      cached_bytes_ += capacity;
      return;
    }
  }
  free_memory(data);
}

// Device blocks are released by the thread and on the device that acquired them (the sender, or
// the progress of its rendezvous on the same process and GPU).
int BufferPool::current_device() const noexcept {
  int device = -1;
  if (memory_ == PoolMemory::Device) {
    cudaGetDevice(&device);
  }
  return device;
}

void BufferPool::free_memory(void* data) const noexcept {
  if (memory_ == PoolMemory::PinnedHost) {
    cudaFreeHost(data);
  } else {
    cudaFree(data);
  }
}

void BufferPool::trim() {
  std::lock_guard lock(mutex_);
  for (const auto& [key, data] : cached_) {
    free_memory(data);
  }
  cached_.clear();
  cached_bytes_ = 0;
}

} // namespace commlens::runtime
