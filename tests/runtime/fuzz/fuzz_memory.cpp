#include "fuzz_memory.hpp"

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fuzz {

namespace {

void check(cudaError_t result, const char* what) {
  if (result != cudaSuccess) {
    std::fprintf(stderr, "runtime_fuzz: %s failed: %s\n", what, cudaGetErrorString(result));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

} // namespace

const char* memory_name(Memory memory) {
  switch (memory) {
  case Memory::Fresh:
    return "fresh";
  case Memory::SubBuffer:
    return "sub-buffer";
  case Memory::Pool:
    return "pool";
  case Memory::Managed:
    return "managed";
  case Memory::Pinned:
    return "pinned";
  case Memory::Pageable:
    return "pageable";
  }
  return "?";
}

int recorded_location(Memory memory) {
  switch (memory) {
  case Memory::Fresh:
  case Memory::SubBuffer:
  case Memory::Pool:
    return 2;
  case Memory::Managed:
    return 3;
  default:
    return 1;
  }
}

bool device_resident(Memory memory) {
  return recorded_location(memory) != 1;
}

BufferFactory::BufferFactory(std::size_t arena_bytes, std::uint64_t seed)
    : random_(seed), arena_bytes_(arena_bytes), sub_buffers_(arena_bytes) {
  if (arena_bytes_ > 0) {
    check(cudaMalloc(&arena_, arena_bytes_), "cudaMalloc of the sub-buffer arena");
  }
}

BufferFactory::~BufferFactory() {
  if (arena_ != nullptr) {
    cudaFree(arena_);
  }
}

Memory BufferFactory::draw_memory() {
  if (arena_ == nullptr) {
    return Memory::Pageable;
  }
  // Device memory most often: it is what the runtime takes; the others check its fallbacks.
  static constexpr Memory kChoices[] = {Memory::Fresh,     Memory::Fresh,     Memory::SubBuffer,
                                        Memory::SubBuffer, Memory::SubBuffer, Memory::Pool,
                                        Memory::Managed,   Memory::Pinned,    Memory::Pageable};
  return kChoices[random_() % std::size(kChoices)];
}

Buffer BufferFactory::make(std::size_t bytes, std::size_t alignment, Memory memory) {
  Buffer buffer{nullptr, bytes == 0 ? 1 : bytes, memory};
  if (memory == Memory::SubBuffer) {
    const std::optional<std::size_t> offset = sub_buffers_.fits(buffer.bytes, alignment)
                                                  ? sub_buffers_.place(buffer.bytes, alignment, random_)
                                                  : std::nullopt;
    if (offset) {
      buffer.data = arena_ + *offset;
      return buffer;
    }
    buffer.memory = memory = Memory::Fresh; // larger than the arena, or its place is still in use
  }
  switch (memory) {
  case Memory::Fresh:
  case Memory::SubBuffer: // not here: placed above, or made fresh
    check(cudaMalloc(&buffer.data, buffer.bytes), "cudaMalloc");
    break;
  case Memory::Pool:
    check(cudaMallocAsync(&buffer.data, buffer.bytes, cudaStreamLegacy), "cudaMallocAsync");
    check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
    break;
  case Memory::Managed:
    check(cudaMallocManaged(&buffer.data, buffer.bytes), "cudaMallocManaged");
    break;
  case Memory::Pinned:
    check(cudaMallocHost(&buffer.data, buffer.bytes), "cudaMallocHost");
    break;
  case Memory::Pageable:
    buffer.data = static_cast<char*>(std::malloc(buffer.bytes));
    break;
  }
  return buffer;
}

void BufferFactory::release(Buffer& buffer) {
  switch (buffer.memory) {
  case Memory::Fresh:
  case Memory::Managed:
    check(cudaFree(buffer.data), "cudaFree");
    break;
  case Memory::Pool:
    check(cudaFreeAsync(buffer.data, cudaStreamLegacy), "cudaFreeAsync");
    break;
  case Memory::Pinned:
    check(cudaFreeHost(buffer.data), "cudaFreeHost");
    break;
  case Memory::Pageable:
    std::free(buffer.data);
    break;
  case Memory::SubBuffer:
    sub_buffers_.release(static_cast<std::size_t>(buffer.data - arena_)); // the arena stays
    break;
  }
  buffer = {};
}

void BufferFactory::write(const Buffer& buffer, std::size_t offset, const void* host, std::size_t bytes) {
  if (bytes > 0 && !device_resident(buffer.memory)) {
    std::memcpy(buffer.data + offset, host, bytes);
  } else if (bytes > 0) {
    check(cudaMemcpy(buffer.data + offset, host, bytes, cudaMemcpyDefault), "cudaMemcpy to the buffer");
  }
}

void BufferFactory::read(const Buffer& buffer, std::size_t offset, void* host, std::size_t bytes) {
  if (bytes > 0 && !device_resident(buffer.memory)) {
    std::memcpy(host, buffer.data + offset, bytes);
  } else if (bytes > 0) {
    check(cudaMemcpy(host, buffer.data + offset, bytes, cudaMemcpyDefault), "cudaMemcpy from the buffer");
  }
}

} // namespace fuzz
