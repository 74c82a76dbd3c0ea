#include "chart_axis.hpp"

#include "format.hpp"

#include <QCoreApplication>

#include <cmath>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("ChartAxis", text);
}

// The smallest of 1, 2, 5 times a power of ten that is at least `minimum`.
double decimal_step(double minimum) {
  const double power = std::pow(10.0, std::floor(std::log10(minimum)));
  for (const double multiple : {1.0, 2.0, 5.0})
    if (power * multiple >= minimum)
      return power * multiple;
  return power * 10;
}

} // namespace

QString format_value(double value, ValueUnit unit) {
  switch (unit) {
  case ValueUnit::Count:
    return format_count(static_cast<std::uint64_t>(std::llround(value)));
  case ValueUnit::Bytes:
    return format_bytes(static_cast<std::uint64_t>(std::llround(value)));
  case ValueUnit::Nanoseconds:
    return format_duration(static_cast<std::int64_t>(std::llround(value)));
  case ValueUnit::GigabytesPerSecond:
    return format_rate(value);
  }
  return {};
}

QString unit_name(ValueUnit unit) {
  switch (unit) {
  case ValueUnit::Count:
    return tr("calls");
  case ValueUnit::Bytes:
    return tr("bytes");
  case ValueUnit::Nanoseconds:
    return tr("time");
  case ValueUnit::GigabytesPerSecond:
    return tr("GB/s");
  }
  return {};
}

std::vector<double> axis_ticks(double highest, ValueUnit unit, int wanted) {
  if (!(highest > 0))
    return {0};
  const double minimum = highest / std::max(wanted, 1);
  // Sizes step by powers of two, so labels read 256KiB, 512KiB rather than 244.1KiB.
  double step = unit == ValueUnit::Bytes ? std::exp2(std::ceil(std::log2(minimum))) : decimal_step(minimum);
  if (unit == ValueUnit::Count || unit == ValueUnit::Bytes)
    step = std::max(step, 1.0); // a third of a call or byte is no tick
  std::vector<double> ticks;
  for (int index = 0; ticks.empty() || ticks.back() < highest; ++index)
    ticks.push_back(index * step);
  return ticks;
}

} // namespace commlens::viewer
