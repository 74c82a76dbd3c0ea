#include "commlens/profiler/event_ring.hpp"

#include <bit>

namespace commlens {

EventRing::EventRing(std::size_t capacity)
    : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1),
      slots_(std::make_unique<EventRecord[]>(mask_ + 1)) {}

} // namespace commlens
