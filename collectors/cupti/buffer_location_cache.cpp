#include "buffer_location_cache.hpp"

#include "location_cache.hpp"

#include <cuda.h>

#include <array>

namespace commlens::cuda {

namespace {

thread_local RangeCache<MemoryAt> cache;

// Device, managed and pinned memory come with their allocation's range; pageable memory, unknown
// to the driver, with this address alone.
Range<MemoryAt> query_driver(std::uintptr_t address) {
  unsigned int memory_type = 0;
  int device = -1;
  unsigned int managed = 0;
  CUdeviceptr range_start = 0;
  std::size_t range_size = 0;
  std::array attributes{CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                        CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                        CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  std::array<void*, 5> values{&memory_type, &device, &managed, &range_start, &range_size};
  const bool known = cuPointerGetAttributes(attributes.size(), attributes.data(), values.data(),
                                            static_cast<CUdeviceptr>(address)) == CUDA_SUCCESS &&
                     memory_type != 0;
  if (!known) {
    return {address, address + 1, {MemoryKind::Pageable, -1}};
  }
  // Managed first, whatever memory type the driver reports for it.
  const MemoryAt memory{managed != 0                          ? MemoryKind::Managed
                        : memory_type == CU_MEMORYTYPE_DEVICE ? MemoryKind::Device
                                                              : MemoryKind::Pinned,
                        managed != 0 || memory_type == CU_MEMORYTYPE_DEVICE ? device : -1};
  if (range_size == 0) {
    return {address, address + 1, memory};
  }
  return {static_cast<std::uintptr_t>(range_start), static_cast<std::uintptr_t>(range_start + range_size),
          memory};
}

} // namespace

MemoryAt cached_memory_at(const void* address) noexcept {
  return cache.locate(reinterpret_cast<std::uintptr_t>(address), query_driver);
}

BufferLocation cached_buffer_location(const void* buffer) noexcept {
  switch (cached_memory_at(buffer).kind) {
  case MemoryKind::Unknown:
    return BufferLocation::Unknown;
  case MemoryKind::Device:
  case MemoryKind::Array:
    return BufferLocation::Device;
  case MemoryKind::Managed:
    return BufferLocation::Managed;
  case MemoryKind::Pageable:
  case MemoryKind::Pinned:
    break;
  }
  return BufferLocation::Host;
}

void forget_buffer_locations() noexcept {
  LocationCache::forget_all();
}

} // namespace commlens::cuda
