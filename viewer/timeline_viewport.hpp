#pragma once
// The visible time window of the timeline and its mapping to pixels. Zoom keeps the time under the
// cursor fixed; pan moves by pixels; both stay inside the trace's extent (with a small margin).
#include <cstdint>

namespace commlens::viewer {

class TimelineViewport {
public:
  // The narrowest window: below this a pixel would be less than a nanosecond.
  static constexpr std::int64_t kMinimumSpanNs = 100;

  void set_extent(std::int64_t start_ns, std::int64_t end_ns); // also shows all of it
  void set_width(int pixels);
  void show(std::int64_t start_ns, std::int64_t end_ns);
  void show_all();

  // factor > 1 zooms in. `anchor_x` is the pixel whose time stays put.
  void zoom(double factor, double anchor_x);
  void pan_pixels(double dx); // positive dx moves the content right (earlier times come in)

  // The whole trace with its margins: what show_all() shows.
  std::int64_t extent_start_ns() const { return extent_start_ns_; }
  std::int64_t extent_end_ns() const { return extent_end_ns_; }
  std::int64_t start_ns() const { return start_ns_; }
  std::int64_t end_ns() const { return end_ns_; }
  std::int64_t span_ns() const { return end_ns_ - start_ns_; }
  int width() const { return width_; }
  double ns_per_pixel() const { return static_cast<double>(span_ns()) / width_; }
  double x_of(std::int64_t time_ns) const;
  std::int64_t time_at(double x) const;

private:
  void clamp();

  std::int64_t extent_start_ns_ = 0, extent_end_ns_ = 1;
  std::int64_t start_ns_ = 0, end_ns_ = 1;
  int width_ = 1;
};

} // namespace commlens::viewer
