#pragma once
// Where an MPI call's buffer lives (host, device, managed), from the driver's pointer attributes.
// Applications pass the same few buffers again and again, so each thread remembers the last
// allocations it classified (whole address ranges for device memory) and asks the driver only on
// a miss. A range freed and reused for a different kind of memory could be misreported until it
// leaves the cache; that needs a free at the same address, and is accepted.
#include "commlens/profiler/event_record.hpp"

namespace commlens::cuda {

BufferLocation cached_buffer_location(const void* buffer) noexcept;

} // namespace commlens::cuda
