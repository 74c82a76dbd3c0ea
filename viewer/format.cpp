#include "format.hpp"

#include "commlens/analysis/size_bin.hpp"

#include <QLocale>

#include <algorithm>
#include <array>
#include <cmath>

namespace commlens::viewer {

QString format_duration(std::int64_t nanoseconds) {
  struct Unit {
    double nanoseconds;
    const char* name;
  };
  static constexpr std::array kUnits = {Unit{1e9, "s"}, Unit{1e6, "ms"}, Unit{1e3, "us"}};
  const double magnitude = std::abs(static_cast<double>(nanoseconds));
  for (const auto& unit : kUnits)
    if (magnitude >= unit.nanoseconds)
      return QStringLiteral("%1 %2")
          .arg(static_cast<double>(nanoseconds) / unit.nanoseconds, 0, 'g', 4)
          .arg(unit.name);
  return QStringLiteral("%1 ns").arg(nanoseconds);
}

QString format_position(std::int64_t nanoseconds, std::int64_t step_ns) {
  static constexpr std::array kUnits = {std::pair{1e9, "s"}, std::pair{1e6, "ms"}, std::pair{1e3, "us"}};
  const double magnitude = std::abs(static_cast<double>(nanoseconds));
  for (const auto& [unit, name] : kUnits)
    if (magnitude >= unit) {
      const int decimals = std::max(0, static_cast<int>(std::ceil(std::log10(
                                           unit / static_cast<double>(std::max<std::int64_t>(step_ns, 1))))));
      return QStringLiteral("%1 %2").arg(static_cast<double>(nanoseconds) / unit, 0, 'f', decimals).arg(name);
    }
  return QStringLiteral("%1 ns").arg(nanoseconds);
}

QString format_bytes(std::uint64_t bytes) {
  return QString::fromStdString(analysis::binary_size(bytes));
}

QString format_count(std::uint64_t count) {
  return QLocale(QLocale::English).toString(static_cast<qulonglong>(count));
}

QString format_peer(std::int64_t peer) {
  switch (peer) {
  case -1:
    return QStringLiteral("none");
  case -2:
    return QStringLiteral("MPI_PROC_NULL");
  case -3:
    return QStringLiteral("MPI_ANY_SOURCE (unresolved)");
  default:
    return QString::number(peer);
  }
}

QString format_rate(double gigabytes_per_second) {
  constexpr int kSignificant = 3, kMostDecimals = 6;
  const double magnitude = std::abs(gigabytes_per_second);
  const int decimals =
      magnitude > 0 ? std::clamp(kSignificant - 1 - static_cast<int>(std::floor(std::log10(magnitude))), 0,
                                 kMostDecimals)
                    : 0;
  auto number = QLocale(QLocale::English).toString(gigabytes_per_second, 'f', decimals);
  // 5 rather than 5.00 on an axis: the zeros carry no digit of the value.
  if (number.contains(QLatin1Char('.'))) {
    while (number.endsWith(QLatin1Char('0')))
      number.chop(1);
    if (number.endsWith(QLatin1Char('.')))
      number.chop(1);
  }
  return QStringLiteral("%1 GB/s").arg(number);
}

QString absence_text(const analysis::Absence& absence) {
  const auto reason = QString::fromStdString(absence.reason);
  return absence.how_to_record.empty()
             ? reason
             : QStringLiteral("%1 (%2)").arg(reason, QString::fromStdString(absence.how_to_record));
}

} // namespace commlens::viewer
