#pragma once
// The units of the report's figures: how a value is written for people ("1.234 ms", "4KiB",
// "12.5%") and which suffix names it in JSON ("time_ns", "bytes", "share"), so every table and
// finding states its unit once, where its column or figure is declared.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace commlens::analysis {

enum class Unit {
  Text,              // names and labels
  Count,             // calls, messages, ranks: plain numbers
  Bytes,             // written as binary sizes
  Nanoseconds,       // written as durations
  Share,             // a fraction, written as a percentage
  GigabytesPerSecond // bytes per nanosecond
};

// A table cell: empty, text or a number in its column's unit.
using Cell = std::variant<std::monostate, std::string, std::int64_t, double>;

// "1.234 ms", "4KiB", "12.5%", "2.35 GB/s"; text as it is; an empty cell is "-".
std::string format_cell(const Cell& cell, Unit unit);
// `value` written in `unit`, as a cell holding it would be.
std::string format_value(double value, Unit unit);
// The suffix a JSON key of a figure in `unit` ends with: "_ns", "_gb_per_s"; empty for counts,
// bytes (whose keys say "bytes"), shares (whose keys say "share") and text.
std::string_view json_unit_suffix(Unit unit);
// "ns", "bytes", "share", "GB/s", "count", "text": the unit named in a JSON document.
std::string_view unit_name(Unit unit);

} // namespace commlens::analysis
