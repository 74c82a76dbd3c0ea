#include "palette.hpp"

#include <QCoreApplication>
#include <QHash>

#include <array>
#include <utility>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("Palette", text);
}

// A family's hue band [first, first + width), saturation and value.
struct Band {
  int first, width, saturation, value;
};

Band band_of(CallFamily family) {
  switch (family) {
  case CallFamily::MpiSend:
    return {18, 22, 170, 235};
  case CallFamily::MpiReceive:
    return {44, 14, 170, 230};
  case CallFamily::MpiCollective:
    return {342, 18, 150, 225};
  case CallFamily::MpiCompletion:
    return {196, 24, 150, 225};
  case CallFamily::MpiOther:
    return {30, 30, 25, 200};
  case CallFamily::Nccl:
    return {164, 16, 170, 195};
  case CallFamily::NcclSetup:
    return {164, 16, 70, 185};
  }
  return {0, 1, 0, 200};
}

bool contains(const QString& name, const char* part, Qt::CaseSensitivity sensitivity = Qt::CaseInsensitive) {
  return name.contains(QLatin1String(part), sensitivity);
}

} // namespace

bool is_nccl(const QString& name) {
  return name.startsWith(QLatin1String("nccl"));
}

CallFamily call_family(const QString& function_name) {
  if (is_nccl(function_name)) // before the MPI families: nccl:Send is no MPI send
    return function_name.startsWith(QLatin1String("nccl:Comm")) ? CallFamily::NcclSetup : CallFamily::Nccl;
  if (contains(function_name, "Wait", Qt::CaseSensitive) ||
      contains(function_name, "Test", Qt::CaseSensitive))
    return CallFamily::MpiCompletion;
  for (const char* collective : {"reduce", "gather", "scatter", "bcast", "alltoall", "barrier", "scan"})
    if (contains(function_name, collective))
      return CallFamily::MpiCollective;
  // One-sided calls count as the sends and receives they are: MPI_Put and accumulates put data,
  // MPI_Get takes it.
  if (contains(function_name, "send") || contains(function_name, "ccumulate") ||
      function_name.endsWith(QLatin1String("put"), Qt::CaseInsensitive))
    return CallFamily::MpiSend;
  if (contains(function_name, "recv") || contains(function_name, "probe") ||
      function_name.endsWith(QLatin1String("get"), Qt::CaseInsensitive))
    return CallFamily::MpiReceive;
  return CallFamily::MpiOther;
}

QColor family_color(CallFamily family) {
  const auto band = band_of(family);
  return QColor::fromHsv((band.first + band.width / 2) % 360, band.saturation, band.value);
}

QString family_name(CallFamily family) {
  switch (family) {
  case CallFamily::MpiSend:
    return tr("MPI sends");
  case CallFamily::MpiReceive:
    return tr("MPI receives");
  case CallFamily::MpiCollective:
    return tr("MPI collectives");
  case CallFamily::MpiCompletion:
    return tr("MPI waits and tests");
  case CallFamily::MpiOther:
    return tr("MPI set-up and other");
  case CallFamily::Nccl:
    return tr("NCCL calls");
  case CallFamily::NcclSetup:
    return tr("NCCL set-up");
  }
  return {};
}

QColor function_color(const QString& function_name) {
  // The hash spreads a family's functions over its band, so neighbours on a lane stay apart.
  const auto band = band_of(call_family(function_name));
  const auto spread = static_cast<int>(qHash(function_name) % static_cast<unsigned>(band.width));
  return QColor::fromHsv((band.first + spread) % 360, band.saturation, band.value);
}

QColor copy_path_color(const std::string& path) {
  // Fixed colours per path (docs/schema.md lists them), so a run reads the same every time; the
  // host-staged path, the slow one to spot, is the darkest.
  static const std::array<std::pair<const char*, QColor>, 6> kColors = {{
      {"host_staged", QColor::fromHsv(286, 190, 170)},
      {"peer", QColor::fromHsv(262, 150, 215)},
      {"ipc", QColor::fromHsv(248, 150, 225)},
      {"same_device", QColor::fromHsv(272, 80, 235)},
      {"managed", QColor::fromHsv(305, 130, 225)},
      {"host_to_host", QColor::fromHsv(280, 40, 185)},
  }};
  for (const auto& [name, color] : kColors)
    if (path == name)
      return color;
  return QColor::fromHsv(290, 30, 150);
}

QColor kernel_color(const QString& short_name, bool communication) {
  if (communication)
    return QColor::fromHsv(190, 200, 165);
  return QColor::fromHsv(95 + static_cast<int>(qHash(short_name) % 45U), 120, 200);
}

QColor device_span_color() {
  return QColor::fromHsv(172, 70, 235);
}

QColor memset_color() {
  return QColor(190, 190, 190);
}

QColor synchronization_color() {
  return QColor(110, 110, 110);
}

QColor api_call_color() {
  // Between the receives' amber and the compute kernels' green: no family draws there.
  return QColor::fromHsv(75, 150, 200);
}

QColor chart_color(qsizetype index) {
  // Tableau 10: distinct in hue and lightness, also for colour-blind readers.
  static constexpr std::array<QRgb, 10> kPalette = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                                    0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return QColor(kPalette[static_cast<std::size_t>(index) % kPalette.size()]);
}

} // namespace commlens::viewer
