#pragma once
// The runtime fuzzer's buffers, in the allocation patterns real programs use: cudaMalloc'd for one
// call and freed after it (the allocator hands the same addresses out again), sub-buffers at
// varying offsets inside one long-lived allocation (as PyTorch's caching allocator hands them out),
// stream-ordered pool memory (cudaMallocAsync, which CUDA IPC cannot export), managed memory, and
// pinned and pageable host memory.
#include "sub_buffer_arena.hpp"

#include <cstddef>
#include <cstdint>
#include <random>

namespace fuzz {

enum class Memory { Fresh, SubBuffer, Pool, Managed, Pinned, Pageable };
const char* memory_name(Memory memory);
// The buffer_locations id commlens records for such memory (1 host, 2 device, 3 managed).
int recorded_location(Memory memory);
bool device_resident(Memory memory); // copies to and from it go through cudaMemcpy

struct Buffer {
  char* data = nullptr;
  std::size_t bytes = 0;
  Memory memory = Memory::Pageable;
};

class BufferFactory {
public:
  // arena_bytes: the long-lived allocation sub-buffers come from; 0: no GPU, host memory only.
  BufferFactory(std::size_t arena_bytes, std::uint64_t seed);
  ~BufferFactory();
  BufferFactory(const BufferFactory&) = delete;
  BufferFactory& operator=(const BufferFactory&) = delete;

  Memory draw_memory();
  // A buffer of at least `bytes` (never zero), aligned to `alignment` only.
  Buffer make(std::size_t bytes, std::size_t alignment, Memory memory);
  void release(Buffer& buffer);

  // Host <-> buffer copies, synchronous.
  static void write(const Buffer& buffer, std::size_t offset, const void* host, std::size_t bytes);
  static void read(const Buffer& buffer, std::size_t offset, void* host, std::size_t bytes);

private:
  std::mt19937_64 random_;
  char* arena_ = nullptr;
  std::size_t arena_bytes_;
  SubBufferArena sub_buffers_; // where in the arena each sub-buffer goes
};

} // namespace fuzz
