#include "transport/buffer_pool.hpp"

#include <cuda_runtime.h>

#include <algorithm>
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
    const int device = current_device();
    const auto found = std::ranges::find_if(cached_, [&](const Cached& cached) {
      return cached.device == device && cached.capacity == capacity;
    });
    if (found != cached_.end()) {
      void* data = found->data;
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

// Keeps the buffer and frees the least recently released ones beyond the bound: a run of messages
// of one size must not find the pool full of another size's buffers and pin or allocate anew for
// every message (that cost 0.3 s per 512 MiB message).
void BufferPool::release(void* data, std::size_t capacity) noexcept {
  if (capacity > max_cached_) {
    free_memory(data);
    return;
  }
  std::lock_guard lock(mutex_);
  cached_.push_front({current_device(), capacity, data});
  cached_bytes_ += capacity;
  while (cached_bytes_ > max_cached_) {
    free_memory(cached_.back().data);
    cached_bytes_ -= cached_.back().capacity;
    cached_.pop_back();
  }
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
  for (const Cached& cached : cached_) {
    free_memory(cached.data);
  }
  cached_.clear();
  cached_bytes_ = 0;
}

} // namespace commlens::runtime
