#pragma once
// Reused buffers for point-to-point: pinned host memory for staged messages and device memory for
// rendezvous send copies. Allocating either costs far more than the copy it serves (cudaMallocHost
// pins page by page; cudaMalloc of a large block takes milliseconds), so released buffers are kept
// by size class, up to a bound (the least recently released go first), for the next message of
// that size.
#include <cstddef>
#include <list>
#include <mutex>

namespace commlens::runtime {

enum class PoolMemory { PinnedHost, Device };

class BufferPool;

// Owns one buffer until destroyed, then hands it back to its pool.
class PooledBuffer {
public:
  PooledBuffer() = default;
  PooledBuffer(BufferPool* pool, void* data, std::size_t capacity)
      : pool_(pool), data_(data), capacity_(capacity) {}
  PooledBuffer(PooledBuffer&& other) noexcept { *this = std::move(other); }
  PooledBuffer& operator=(PooledBuffer&& other) noexcept;
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  ~PooledBuffer() { reset(); }

  void* data() const noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  void reset() noexcept;

private:
  BufferPool* pool_ = nullptr;
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class BufferPool {
public:
  BufferPool(PoolMemory memory, std::size_t max_cached_bytes)
      : memory_(memory), max_cached_(max_cached_bytes) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool() { trim(); }

  // At least `bytes` (device memory on the current GPU); empty when the allocation failed.
  PooledBuffer acquire(std::size_t bytes);
  // Frees every cached buffer (MPI_Finalize).
  void trim();

private:
  friend class PooledBuffer;
  void release(void* data, std::size_t capacity) noexcept;
  int current_device() const noexcept;
  void free_memory(void* data) const noexcept;

  PoolMemory memory_;
  std::size_t max_cached_;
  std::mutex mutex_;
  struct Cached {
    int device; // -1 for pinned host memory
    std::size_t capacity;
    void* data;
  };
  std::list<Cached> cached_; // most recently released first
  std::size_t cached_bytes_ = 0;
};

} // namespace commlens::runtime
