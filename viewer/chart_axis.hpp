#pragma once
// The value axis the viewer's charts share: round tick steps (1, 2 or 5 times a power of ten, or of
// 1024 for bytes, so tick labels read 256KiB rather than 244.1KiB) and the unit every label carries.
#include <QString>

#include <functional>
#include <vector>

namespace commlens::viewer {

enum class ValueUnit { Count, Bytes, Nanoseconds, GigabytesPerSecond };

// A value with its unit for people: "1,234", "1.5MiB", "2.5 ms", "12.3 GB/s".
QString format_value(double value, ValueUnit unit);
// What the unit is called on an axis title: "calls", "bytes", "time", "GB/s".
QString unit_name(ValueUnit unit);

// Ticks from 0 to at least `highest`, about `wanted` of them.
std::vector<double> axis_ticks(double highest, ValueUnit unit, int wanted = 5);

} // namespace commlens::viewer
