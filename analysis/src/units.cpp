#include "commlens/analysis/units.hpp"

#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>

#include <cmath>

namespace commlens::analysis {
namespace {

// "3", "2.5", "0.33": a count without trailing zeros.
std::string count_text(double value) {
  auto text = fmt::format("{:.2f}", value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.')
    text.pop_back();
  return text;
}

} // namespace

std::string format_value(double value, Unit unit) {
  switch (unit) {
  case Unit::Text:
  case Unit::Count:
    return count_text(value);
  case Unit::Bytes:
    return binary_size(static_cast<std::uint64_t>(std::llround(std::max(value, 0.0))));
  case Unit::Nanoseconds:
    return human_duration(value);
  case Unit::Share:
    return fmt::format("{:.1f}%", value * 100.0);
  case Unit::GigabytesPerSecond:
    return fmt::format("{:.2f} GB/s", value);
  }
  return count_text(value);
}

std::string format_cell(const Cell& cell, Unit unit) {
  if (const auto* text = std::get_if<std::string>(&cell))
    return *text;
  if (const auto* integer = std::get_if<std::int64_t>(&cell))
    return unit == Unit::Text || unit == Unit::Count ? std::to_string(*integer)
                                                     : format_value(double(*integer), unit);
  if (const auto* real = std::get_if<double>(&cell))
    return format_value(*real, unit);
  return "-";
}

std::string_view json_unit_suffix(Unit unit) {
  switch (unit) {
  case Unit::Nanoseconds:
    return "_ns";
  case Unit::GigabytesPerSecond:
    return "_gb_per_s";
  default:
    return "";
  }
}

std::string_view unit_name(Unit unit) {
  switch (unit) {
  case Unit::Text:
    return "text";
  case Unit::Count:
    return "count";
  case Unit::Bytes:
    return "bytes";
  case Unit::Nanoseconds:
    return "ns";
  case Unit::Share:
    return "share";
  case Unit::GigabytesPerSecond:
    return "GB/s";
  }
  return "text";
}

} // namespace commlens::analysis
