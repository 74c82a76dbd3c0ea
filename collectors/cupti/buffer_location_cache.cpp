#include "buffer_location_cache.hpp"

#include <cuda.h>

#include <array>
#include <cstdint>

namespace commlens::cuda {

namespace {

struct CachedRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0; // exclusive; begin == end is an empty slot
  BufferLocation location = BufferLocation::Unknown;
};

constexpr std::size_t kCachedRanges = 16;
thread_local std::array<CachedRange, kCachedRanges> cache;
thread_local std::size_t next_slot = 0;

CachedRange query_driver(std::uintptr_t address) {
  unsigned int memory_type = 0;
  unsigned int is_managed = 0;
  CUdeviceptr range_start = 0;
  std::size_t range_size = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* values[] = {&memory_type, &is_managed, &range_start, &range_size};
  const bool known =
      cuPointerGetAttributes(4, attributes, values, static_cast<CUdeviceptr>(address)) == CUDA_SUCCESS;
  if (!known || memory_type != CU_MEMORYTYPE_DEVICE || range_size == 0) {
    // Host memory (pageable or registered): no range to cache, so remember this pointer alone.
    return {address, address + 1, BufferLocation::Host};
  }
  return {static_cast<std::uintptr_t>(range_start), static_cast<std::uintptr_t>(range_start + range_size),
          is_managed != 0 ? BufferLocation::Managed : BufferLocation::Device};
}

} // namespace

BufferLocation cached_buffer_location(const void* buffer) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(buffer);
  if (address == 0) {
    return BufferLocation::Unknown;
  }
  for (const CachedRange& range : cache) {
    if (address >= range.begin && address < range.end) {
      return range.location;
    }
  }
  const CachedRange found = query_driver(address);
  cache[next_slot] = found;
  next_slot = (next_slot + 1) % kCachedRanges;
  return found.location;
}

} // namespace commlens::cuda
