#include "function_colors.hpp"

#include <QHash>

#include <array>

namespace commlens::viewer {

bool is_nccl(const QString& name) {
  return name.startsWith(QLatin1String("nccl"));
}

QColor function_color(const QString& function_name) {
  // Families keep neighbouring hues (all waits blue-ish, all sends orange-ish) so a timeline reads
  // at a glance; the hash spreads functions of one family within its band.
  const auto spread = static_cast<int>(qHash(function_name) % 40U);
  int hue = 280 + spread / 2;
  if (is_nccl(function_name)) // before the MPI families: nccl:Send is no MPI send
    return QColor::fromHsv(160 + spread, 170, 195);
  if (function_name.contains(QLatin1String("Wait")) || function_name.contains(QLatin1String("Test")))
    hue = 200 + spread;
  else if (function_name.contains(QLatin1String("send"), Qt::CaseInsensitive))
    hue = 20 + spread;
  else if (function_name.contains(QLatin1String("recv"), Qt::CaseInsensitive))
    hue = 90 + spread;
  else if (function_name.contains(QLatin1String("reduce"), Qt::CaseInsensitive) ||
           function_name.contains(QLatin1String("gather"), Qt::CaseInsensitive) ||
           function_name.contains(QLatin1String("Bcast")) || function_name.contains(QLatin1String("all")))
    hue = 330 + spread / 2;
  else if (function_name.contains(QLatin1String("Barrier")))
    hue = 0;
  return QColor::fromHsv(hue % 360, 150, 225);
}

} // namespace commlens::viewer

namespace commlens::viewer {

QColor chart_color(qsizetype index) {
  // Tableau 10: distinct in hue and lightness, also for colour-blind readers.
  static constexpr std::array<QRgb, 10> kPalette = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                                    0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return QColor(kPalette[static_cast<std::size_t>(index) % kPalette.size()]);
}

} // namespace commlens::viewer
