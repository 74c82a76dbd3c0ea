#include "timeline_legend.hpp"

#include "palette.hpp"

#include <QPainter>

#include <set>

namespace commlens::viewer {
namespace {

constexpr int kSwatch = 12, kGap = 14, kLineHeight = 16;

void add_call_families(const LoadedDatabase& database, std::vector<LegendEntry>& entries) {
  std::set<CallFamily> families;
  for (const auto& function : database.report.functions)
    families.insert(call_family(QString::fromStdString(function.name)));
  for (const auto family : families)
    entries.push_back({family_name(family), family_color(family)});
}

void add_implementations(const LoadedDatabase& database, std::vector<LegendEntry>& entries) {
  if (!database.has_runtime_ops)
    return;
  entries.push_back({QObject::tr("ran in the GPU runtime"), QColor(0, 90, 40), LegendEntry::Style::Hatched});
  for (const auto& [id, name] : database.implementation_names)
    if (name.starts_with("mpi:")) {
      entries.push_back(
          {QObject::tr("host-staged baseline"), QColor(120, 20, 20), LegendEntry::Style::Outlined});
      return;
    }
}

void add_gpu_work(const LoadedDatabase& database, std::vector<LegendEntry>& entries) {
  bool spans = false, compute = false, communication = false, memsets = false;
  for (const auto& stream : database.gpu_streams) {
    spans = spans || stream.nccl_spans > 0;
    compute = compute || stream.compute_kernels > 0;
    communication = communication || stream.communication_kernels > 0;
    memsets = memsets || stream.memsets > 0;
  }
  if (spans)
    entries.push_back({QObject::tr("NCCL call on the GPU (CUDA events)"), device_span_color()});
  if (compute)
    entries.push_back({QObject::tr("compute kernels"), kernel_color(QStringLiteral("compute"), false)});
  if (communication)
    entries.push_back({QObject::tr("communication kernels"), kernel_color({}, true)});
  std::set<std::string> paths;
  for (const auto& usage : database.copy_paths)
    paths.insert(usage.route.path);
  for (const auto& path : paths)
    entries.push_back({QObject::tr("copies: %1").arg(QString::fromStdString(path)), copy_path_color(path)});
  if (memsets)
    entries.push_back({QObject::tr("memsets"), memset_color()});
  if (!database.cuda_api_threads.empty())
    entries.push_back({QObject::tr("CUDA API calls"), api_call_color()});
  if (database.has_synchronizations)
    entries.push_back({QObject::tr("CUDA sync (the host waits)"), synchronization_color()});
}

} // namespace

std::vector<LegendEntry> legend_entries(const LoadedDatabase& database) {
  std::vector<LegendEntry> entries;
  add_call_families(database, entries);
  add_implementations(database, entries);
  add_gpu_work(database, entries);
  if (database.timeline.has_ranges)
    entries.push_back({QObject::tr("NVTX ranges (by name)"), QColor::fromHsv(40, 70, 235)});
  return entries;
}

TimelineLegend::TimelineLegend(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void TimelineLegend::set_entries(std::vector<LegendEntry> entries) {
  entries_ = std::move(entries);
  fit_height();
  update();
}

std::vector<QRect> TimelineLegend::entry_boxes(int* height) const {
  std::vector<QRect> boxes;
  int x = 4, y = 2;
  for (const auto& entry : entries_) {
    const int width = kSwatch + 4 + fontMetrics().horizontalAdvance(entry.name);
    if (x > 4 && x + width > this->width() - 4) {
      x = 4;
      y += kLineHeight;
    }
    boxes.emplace_back(x, y, width, kLineHeight);
    x += width + kGap;
  }
  *height = entries_.empty() ? 0 : y + kLineHeight + 2;
  return boxes;
}

void TimelineLegend::fit_height() {
  int height = 0;
  entry_boxes(&height);
  setFixedHeight(height);
}

void TimelineLegend::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit_height();
}

void TimelineLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  int height = 0;
  const auto boxes = entry_boxes(&height);
  for (std::size_t index = 0; index < entries_.size(); ++index) {
    const auto& entry = entries_[index];
    const auto& box = boxes[index];
    const QRect swatch(box.left(), box.top() + (kLineHeight - kSwatch + 2) / 2, kSwatch, kSwatch - 2);
    switch (entry.style) {
    case LegendEntry::Style::Fill:
      painter.fillRect(swatch, entry.color);
      break;
    case LegendEntry::Style::Hatched:
      painter.fillRect(swatch, QColor(230, 230, 230));
      painter.fillRect(swatch, QBrush(entry.color, Qt::BDiagPattern));
      break;
    case LegendEntry::Style::Outlined:
      painter.setPen(QPen(entry.color, 2, Qt::DashLine));
      painter.drawRect(swatch.adjusted(1, 1, -1, -1));
      break;
    }
    painter.setPen(Qt::black);
    painter.drawText(QRect(box.left() + kSwatch + 4, box.top(), box.width() - kSwatch - 4, kLineHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, entry.name);
  }
}

} // namespace commlens::viewer
