#include "timeline_viewport.hpp"

#include <algorithm>
#include <cmath>

namespace commlens::viewer {

void TimelineViewport::set_extent(std::int64_t start_ns, std::int64_t end_ns) {
  // A 2 % margin on each side so the first and last calls are not glued to the edges.
  const auto margin = std::max<std::int64_t>((end_ns - start_ns) / 50, 1);
  extent_start_ns_ = start_ns - margin;
  extent_end_ns_ = std::max(end_ns + margin, extent_start_ns_ + kMinimumSpanNs);
  show_all();
}

void TimelineViewport::set_width(int pixels) {
  width_ = std::max(pixels, 1);
}

void TimelineViewport::show(std::int64_t start_ns, std::int64_t end_ns) {
  start_ns_ = start_ns;
  end_ns_ = std::max(end_ns, start_ns + kMinimumSpanNs);
  clamp();
}

void TimelineViewport::show_all() {
  show(extent_start_ns_, extent_end_ns_);
}

void TimelineViewport::zoom(double factor, double anchor_x) {
  const auto anchor_ns = time_at(anchor_x);
  const double new_span = std::max(static_cast<double>(span_ns()) / factor, double(kMinimumSpanNs));
  const double anchor_share = std::clamp(anchor_x / width_, 0.0, 1.0);
  const auto new_start = anchor_ns - static_cast<std::int64_t>(std::llround(new_span * anchor_share));
  show(new_start, new_start + static_cast<std::int64_t>(std::llround(new_span)));
}

void TimelineViewport::pan_pixels(double dx) {
  const auto shift = static_cast<std::int64_t>(std::llround(dx * ns_per_pixel()));
  show(start_ns_ - shift, end_ns_ - shift);
}

double TimelineViewport::x_of(std::int64_t time_ns) const {
  return static_cast<double>(time_ns - start_ns_) / ns_per_pixel();
}

std::int64_t TimelineViewport::time_at(double x) const {
  return start_ns_ + static_cast<std::int64_t>(std::llround(x * ns_per_pixel()));
}

void TimelineViewport::clamp() {
  const auto extent = extent_end_ns_ - extent_start_ns_;
  auto span = std::min(end_ns_ - start_ns_, extent);
  start_ns_ = std::clamp(start_ns_, extent_start_ns_, extent_end_ns_ - span);
  end_ns_ = start_ns_ + span;
}

} // namespace commlens::viewer
