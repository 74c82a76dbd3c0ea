#pragma once
// Where a user buffer lives: host memory unless the CUDA collector installed its pointer-attribute
// query (cached per allocation) in the hooks.
#include "collector_hooks.hpp"

namespace commlens::pmpi {

inline BufferLocation buffer_location(const void* buffer) noexcept {
  const auto query = contract::collector_hooks().buffer_location;
  return query != nullptr ? query(buffer) : BufferLocation::Host;
}

} // namespace commlens::pmpi
