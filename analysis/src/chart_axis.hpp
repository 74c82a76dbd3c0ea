#pragma once
// Value axes for the HTML report's charts: round tick values for a range and their labels in the
// axis's unit ("0", "5 ms", "10 ms"; "0", "256KiB", "512KiB"; "0%", "50%", "100%").
#include "commlens/analysis/units.hpp"

#include <string>
#include <vector>

namespace commlens::analysis::detail {

struct AxisTick {
  double value = 0;
  std::string label;
};

struct Axis {
  double top = 1; // the axis ends here: the last tick, at or above the largest value
  std::vector<AxisTick> ticks;
};

// Ticks from 0 up to at least `largest`, about `count` of them: steps of 1, 2 or 5 times a power
// of ten (times a power of two for bytes), labelled in `unit`.
Axis value_axis(double largest, Unit unit, int count = 4);

// Text and attribute values for markup.
std::string html_escape(std::string_view text);

} // namespace commlens::analysis::detail
