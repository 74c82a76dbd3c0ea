#pragma once
// How a message is cut into segments, and how many segments a rank keeps in flight: the plain
// logic of the event-driven pipelines (bcast/, reduce/), tested without a GPU. A rank starts a
// segment as soon as its inputs are ready upstream (its parent's copy for bcast, its children's
// partial results for reduce) and fewer than `window` of its own are still running; it completes
// them in order, so one counter per rank tells its neighbours how far it got.
#include <cstdint>

namespace commlens::runtime::trees {

struct Segment {
  std::uint64_t offset = 0; // bytes from the message's start
  std::uint64_t bytes = 0;
};

class SegmentPlan {
public:
  // Segments of about `wanted_segment_bytes` (rounded down to a whole number of units, at least
  // one): a unit is the least common multiple of the element size and 16 bytes, so every segment
  // but the last starts on a 16-byte boundary of the message and holds whole elements.
  SegmentPlan(std::uint64_t bytes, std::uint64_t element_bytes, std::uint64_t wanted_segment_bytes);

  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t segment_bytes() const noexcept { return segment_bytes_; }
  std::uint32_t count() const noexcept { return count_; } // 0 for an empty message
  // The i-th segment (i < count()); the last may be shorter.
  Segment segment(std::uint32_t index) const noexcept;

private:
  std::uint64_t bytes_;
  std::uint64_t segment_bytes_;
  std::uint32_t count_;
};

// One rank's segments in flight: issued in order while upstream has them ready and the window has
// room, completed in order.
class SegmentWindow {
public:
  SegmentWindow(std::uint32_t segments, std::uint32_t window) noexcept;

  // The next segment may start now, with `ready` segments available upstream.
  bool can_issue(std::uint32_t ready) const noexcept {
    return issued_ < segments_ && issued_ < ready && issued_ - completed_ < window_;
  }
  std::uint32_t issue() noexcept { return issued_++; } // the index of the segment started
  std::uint32_t oldest() const noexcept { return completed_; }
  void complete_oldest() noexcept { ++completed_; }

  std::uint32_t issued() const noexcept { return issued_; }
  std::uint32_t completed() const noexcept { return completed_; }
  std::uint32_t in_flight() const noexcept { return issued_ - completed_; }
  bool done() const noexcept { return completed_ == segments_; }

private:
  std::uint32_t segments_;
  std::uint32_t window_;
  std::uint32_t issued_ = 0;
  std::uint32_t completed_ = 0;
};

} // namespace commlens::runtime::trees
