#pragma once
// What memory an address is in, from the driver's pointer attributes: where an MPI call's buffer
// lives (host, device, managed) and what a copy's ends are (pageable or pinned host memory, device
// or managed memory, and on which device). Applications pass the same few buffers again and again,
// so each thread remembers the last allocations it classified (whole address ranges for device,
// managed and pinned memory; location_cache.hpp) and asks the driver only on a miss. Allocations
// and frees (api_callbacks.cpp, or the runtime's calls: runtime_copies.hpp) call
// forget_buffer_locations(), so a freed range reused for another kind of memory is asked again.
#include "cuda_records.hpp"

#include "commlens/profiler/event_record.hpp"

#include <cstdint>

namespace commlens::cuda {

struct MemoryAt {
  MemoryKind kind = MemoryKind::Unknown; // Unknown only for the null pointer
  std::int32_t device = -1;              // -1: host memory
};

MemoryAt cached_memory_at(const void* address) noexcept;
BufferLocation cached_buffer_location(const void* buffer) noexcept;
void forget_buffer_locations() noexcept;

} // namespace commlens::cuda
