#include "buffer_location_cache.hpp"

#include "location_cache.hpp"

#include <cuda.h>

namespace commlens::cuda {

namespace {

thread_local LocationCache cache;

LocatedRange query_driver(std::uintptr_t address) {
  unsigned int memory_type = 0;
  unsigned int is_managed = 0;
  CUdeviceptr range_start = 0;
  std::size_t range_size = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* values[] = {&memory_type, &is_managed, &range_start, &range_size};
  const bool known =
      cuPointerGetAttributes(4, attributes, values, static_cast<CUdeviceptr>(address)) == CUDA_SUCCESS;
  const bool has_range = known && range_size != 0;
  const auto begin = static_cast<std::uintptr_t>(range_start);
  const auto end = static_cast<std::uintptr_t>(range_start + range_size);
  // Managed first, whatever memory type the driver reports for it.
  if (known && is_managed != 0) {
    return has_range ? LocatedRange{begin, end, BufferLocation::Managed}
                     : LocatedRange{address, address + 1, BufferLocation::Managed};
  }
  if (has_range && memory_type == CU_MEMORYTYPE_DEVICE) {
    return {begin, end, BufferLocation::Device};
  }
  // Host memory (pageable or registered): no range to cache, so remember this pointer alone.
  return {address, address + 1, BufferLocation::Host};
}

} // namespace

BufferLocation cached_buffer_location(const void* buffer) noexcept {
  return cache.locate(reinterpret_cast<std::uintptr_t>(buffer), query_driver, BufferLocation::Unknown);
}

void forget_buffer_locations() noexcept {
  LocationCache::forget_all();
}

} // namespace commlens::cuda
