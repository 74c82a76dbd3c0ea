#pragma once
// How a message is cut into segments, and how many segments a rank keeps in flight: the plain
// logic of the event-driven pipelines (bcast/, reduce/), tested without a GPU. A rank starts a
// segment as soon as its inputs are ready upstream (its parent's copy for bcast, its children's
// partial results for reduce) and fewer than `window` of its own are still running. Its segments
// go round robin on its streams, so on several streams they may finish out of order; it counts
// them completed in order only (a prefix of finished segments), so one counter per rank tells its
// neighbours how far it got: segments 0..k-1 are ready.
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

// The stream of a rank's `streams` (1 or more) that runs segment `index`: round robin.
constexpr std::uint32_t stream_of_segment(std::uint32_t index, std::uint32_t streams) noexcept {
  return streams <= 1 ? 0 : index % streams;
}

// One rank's segments in flight: issued in order while upstream has them ready and the window has
// room, finished in any order across streams, completed (counted) in order.
class SegmentWindow {
public:
  // Windows above kMaxInFlight act as kMaxInFlight (the tuning table allows no more).
  static constexpr std::uint32_t kMaxInFlight = 64;

  SegmentWindow(std::uint32_t segments, std::uint32_t window) noexcept;

  // The next segment may start now, with `ready` segments available upstream.
  bool can_issue(std::uint32_t ready) const noexcept {
    return issued_ < segments_ && issued_ < ready && issued_ - completed_ < window_;
  }
  std::uint32_t issue() noexcept { return issued_++; } // the index of the segment started

  // Polls the segments in flight, oldest first, on `streams` streams (stream_of_segment):
  // fired(index) says whether that segment's work has finished (its event fired). A stream runs
  // its work in order, so one still running stops the polling of its stream's later segments (on
  // one stream: of every later one). Then completed() advances over the finished segments at the
  // front. Returns whether it advanced.
  template <typename Fired> bool poll(std::uint32_t streams, Fired&& fired) {
    std::uint64_t blocked_streams = 0;
    for (std::uint32_t index = completed_; index < issued_; ++index) {
      const std::uint64_t stream_bit = std::uint64_t{1} << (stream_of_segment(index, streams) % 64);
      if ((finished_ & finished_bit(index)) != 0 || (blocked_streams & stream_bit) != 0) {
        continue;
      }
      if (fired(index)) {
        finished_ |= finished_bit(index);
      } else {
        blocked_streams |= stream_bit;
      }
    }
    const std::uint32_t before = completed_;
    while (completed_ < issued_ && (finished_ & finished_bit(completed_)) != 0) {
      finished_ &= ~finished_bit(completed_);
      ++completed_;
    }
    return completed_ != before;
  }

  std::uint32_t issued() const noexcept { return issued_; }
  std::uint32_t completed() const noexcept { return completed_; }
  std::uint32_t in_flight() const noexcept { return issued_ - completed_; }
  bool done() const noexcept { return completed_ == segments_; }

private:
  // At most window_ segments are in flight, consecutive ones, so their bits are distinct.
  std::uint64_t finished_bit(std::uint32_t index) const noexcept {
    return std::uint64_t{1} << (index % window_);
  }

  std::uint32_t segments_;
  std::uint32_t window_;
  std::uint32_t issued_ = 0;
  std::uint32_t completed_ = 0;
  std::uint64_t finished_ = 0; // finished, not yet completed: bit index % window_
};

} // namespace commlens::runtime::trees
