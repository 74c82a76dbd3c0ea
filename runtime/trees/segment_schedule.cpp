#include "trees/segment_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace commlens::runtime::trees {

SegmentPlan::SegmentPlan(std::uint64_t bytes, std::uint64_t element_bytes, std::uint64_t wanted_segment_bytes)
    : bytes_(bytes) {
  if (element_bytes == 0) {
    throw std::invalid_argument("SegmentPlan: element size 0");
  }
  const std::uint64_t unit = std::lcm(element_bytes, std::uint64_t{16});
  segment_bytes_ = std::max(unit, wanted_segment_bytes / unit * unit);
  // An MPI count is an int and a segment holds at least one element, so the count fits 32 bits.
  count_ = static_cast<std::uint32_t>((bytes + segment_bytes_ - 1) / segment_bytes_);
}

Segment SegmentPlan::segment(std::uint32_t index) const noexcept {
  const std::uint64_t offset = std::uint64_t{index} * segment_bytes_;
  return {offset, std::min(segment_bytes_, bytes_ - offset)};
}

SegmentWindow::SegmentWindow(std::uint32_t segments, std::uint32_t window) noexcept
    : segments_(segments), window_(std::clamp<std::uint32_t>(window, 1, kMaxInFlight)) {}

} // namespace commlens::runtime::trees
