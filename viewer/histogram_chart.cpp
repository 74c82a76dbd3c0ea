#include "histogram_chart.hpp"

#include "format.hpp"
#include "function_colors.hpp"

#include <QPainter>

#include <algorithm>

namespace commlens::viewer {

HistogramChart::HistogramChart(QWidget* parent) : QWidget(parent) {
  setMinimumSize(400, 250);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
}

void HistogramChart::set_histogram(QString title, std::vector<analysis::SizeBinStats> bins,
                                   HistogramMetric metric) {
  title_ = std::move(title);
  bins_ = std::move(bins);
  metric_ = metric;
  update();
}

double HistogramChart::value_of(const analysis::SizeBinStats& bin) const {
  switch (metric_) {
  case HistogramMetric::Calls:
    return static_cast<double>(bin.calls);
  case HistogramMetric::Bytes:
    return static_cast<double>(bin.bytes_sent + bin.bytes_recv);
  case HistogramMetric::Time:
    return static_cast<double>(bin.time_total_ns);
  }
  return 0;
}

QString HistogramChart::label_of(double value) const {
  switch (metric_) {
  case HistogramMetric::Calls:
    return format_count(static_cast<std::uint64_t>(value));
  case HistogramMetric::Bytes:
    return format_bytes(static_cast<std::uint64_t>(value));
  case HistogramMetric::Time:
    return format_duration(static_cast<std::int64_t>(value));
  }
  return {};
}

void HistogramChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.drawText(QRect(0, 4, width(), 20), Qt::AlignHCenter, title_);
  if (bins_.empty()) {
    painter.drawText(rect(), Qt::AlignCenter, tr("No calls of this function in this selection."));
    return;
  }
  double highest = 0;
  for (const auto& bin : bins_)
    highest = std::max(highest, value_of(bin));
  const QRect plot = rect().adjusted(50, 44, -20, -60);
  painter.setPen(Qt::gray);
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  const double slot = static_cast<double>(plot.width()) / static_cast<double>(bins_.size());
  const QColor color = function_color(title_.section(QLatin1Char(' '), 0, 0));
  for (std::size_t index = 0; index < bins_.size(); ++index) {
    const auto& bin = bins_[index];
    const double value = value_of(bin);
    const double bar = highest > 0 ? plot.height() * value / highest : 0;
    const QRectF box(plot.left() + slot * index + slot * 0.1, plot.bottom() - bar, slot * 0.8, bar);
    painter.fillRect(box, color);
    painter.setPen(Qt::black);
    painter.drawText(QRectF(box.left() - slot * 0.1, box.top() - 18, slot, 16), Qt::AlignHCenter,
                     label_of(value));
    painter.save();
    painter.translate(box.center().x(), plot.bottom() + 6);
    painter.rotate(30);
    painter.drawText(QPointF(0, 10), QString::fromStdString(bin.label));
    painter.restore();
  }
}

} // namespace commlens::viewer
