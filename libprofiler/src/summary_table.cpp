#include "commlens/profiler/summary_table.hpp"

namespace commlens {

SummaryTable::SummaryTable(std::size_t capacity)
    : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1),
      slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

} // namespace commlens
