#pragma once
// Where a user buffer lives. Without the CUDA part every buffer is host memory; the CUDA plugin
// replaces this one function with a pointer-attribute query (cached per allocation).
#include "commlens/profiler/event_record.hpp"

namespace commlens::pmpi {

inline BufferLocation buffer_location(const void* /*buffer*/) noexcept {
  return BufferLocation::Host;
}

} // namespace commlens::pmpi
