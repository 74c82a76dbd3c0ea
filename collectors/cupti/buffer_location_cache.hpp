#pragma once
// Where an MPI call's buffer lives (host, device, managed), from the driver's pointer attributes.
// Applications pass the same few buffers again and again, so each thread remembers the last
// allocations it classified (whole address ranges for device memory; location_cache.hpp) and asks
// the driver only on a miss. The allocation and free callbacks (api_callbacks.cpp) call
// forget_buffer_locations(), so a freed range reused for another kind of memory is asked again.
#include "commlens/profiler/event_record.hpp"

namespace commlens::cuda {

BufferLocation cached_buffer_location(const void* buffer) noexcept;
void forget_buffer_locations() noexcept;

} // namespace commlens::cuda
