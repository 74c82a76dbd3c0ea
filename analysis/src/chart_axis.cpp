#include "chart_axis.hpp"

#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>

#include <cmath>

namespace commlens::analysis::detail {
namespace {

// 1, 2 or 5 times a power of ten, at least `raw`.
double round_step(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0})
    if (factor * power >= raw)
      return factor * power;
  return 10.0 * power;
}

// A power of two, at least `raw` and at least a byte: ticks read as 256KiB, 512KiB, 1MiB.
double binary_step(double raw) {
  return std::exp2(std::ceil(std::log2(std::max(raw, 1.0))));
}

// Durations in the unit of the axis's top, with as few decimals as the step needs.
std::string duration_label(double value, double top) {
  struct Scale {
    double nanoseconds;
    const char* name;
  };
  static constexpr Scale kScales[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
  for (const auto& scale : kScales)
    if (top >= scale.nanoseconds || scale.nanoseconds == 1) {
      const double scaled = value / scale.nanoseconds;
      return scaled == std::floor(scaled) ? fmt::format("{:.0f} {}", scaled, scale.name)
                                          : fmt::format("{:.1f} {}", scaled, scale.name);
    }
  return fmt::format("{:.0f} ns", value);
}

std::string label(double value, double top, Unit unit) {
  switch (unit) {
  case Unit::Nanoseconds:
    return duration_label(value, top);
  case Unit::Bytes:
    return binary_size(static_cast<std::uint64_t>(std::llround(value)));
  case Unit::Share:
    return fmt::format("{:.0f}%", value * 100.0);
  default:
    return value == std::floor(value) ? fmt::format("{:.0f}", value) : fmt::format("{:.1f}", value);
  }
}

} // namespace

Axis value_axis(double largest, Unit unit, int count) {
  Axis axis;
  if (!(largest > 0))
    largest = 1.0;
  const double raw = largest / std::max(count, 1);
  const double step = unit == Unit::Bytes ? binary_step(raw) : round_step(raw);
  const int steps = static_cast<int>(std::ceil(largest / step - 1e-9));
  axis.top = step * std::max(steps, 1);
  for (int index = 0; index <= std::max(steps, 1); ++index)
    axis.ticks.push_back({step * index, label(step * index, axis.top, unit)});
  return axis;
}

std::string html_escape(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

} // namespace commlens::analysis::detail
