#include "histogram_chart.hpp"

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

ValueUnit HistogramChart::unit() const {
  switch (metric_) {
  case HistogramMetric::Calls:
    return ValueUnit::Count;
  case HistogramMetric::Bytes:
    return ValueUnit::Bytes;
  case HistogramMetric::Time:
    return ValueUnit::Nanoseconds;
  }
  return ValueUnit::Count;
}

double HistogramChart::highest() const {
  double highest = 0;
  for (const auto& bin : bins_)
    highest = std::max(highest, value_of(bin));
  return highest;
}

QStringList HistogramChart::y_tick_labels() const {
  QStringList labels;
  for (const double tick : axis_ticks(highest(), unit()))
    labels << format_value(tick, unit());
  return labels;
}

QString HistogramChart::y_axis_title() const {
  switch (metric_) {
  case HistogramMetric::Calls:
    return tr("calls");
  case HistogramMetric::Bytes:
    return tr("bytes sent + received");
  case HistogramMetric::Time:
    return tr("time in calls");
  }
  return {};
}

QString HistogramChart::x_axis_title() const {
  return tr("message size per call (power-of-two bins)");
}

void HistogramChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.drawText(QRect(0, 4, width(), 20), Qt::AlignHCenter, title_);
  if (bins_.empty()) {
    painter.drawText(rect(), Qt::AlignCenter, tr("No calls of this function in this selection."));
    return;
  }
  const auto ticks = axis_ticks(highest(), unit());
  const double top = ticks.back();
  const QRect plot = rect().adjusted(96, 44, -20, -86);
  // Value axis: grid lines under the bars, tick labels with units, the title turned along it.
  for (const double tick : ticks) {
    const int y = plot.bottom() - static_cast<int>(plot.height() * tick / top);
    painter.setPen(QColor(230, 230, 230));
    painter.drawLine(plot.left(), y, plot.right(), y);
    painter.setPen(Qt::darkGray);
    painter.drawText(QRect(0, y - 8, plot.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                     format_value(tick, unit()));
  }
  painter.save();
  painter.translate(12, plot.center().y());
  painter.rotate(-90);
  painter.drawText(QRect(-plot.height() / 2, -8, plot.height(), 16), Qt::AlignCenter, y_axis_title());
  painter.restore();
  painter.drawText(QRect(plot.left(), height() - 22, plot.width(), 18), Qt::AlignHCenter, x_axis_title());
  painter.setPen(Qt::gray);
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  painter.drawLine(plot.bottomLeft(), plot.topLeft());

  // Few bins would make slabs: a bar is at most kMaxSlot wide, the bars centred.
  constexpr double kMaxSlot = 140;
  const double slot =
      std::min(kMaxSlot, static_cast<double>(plot.width()) / static_cast<double>(bins_.size()));
  const double left = plot.left() + (plot.width() - slot * static_cast<double>(bins_.size())) / 2;
  const QColor color = function_color(title_.section(QLatin1Char(' '), 0, 0));
  for (std::size_t index = 0; index < bins_.size(); ++index) {
    const auto& bin = bins_[index];
    const double value = value_of(bin);
    const double bar = plot.height() * value / top;
    const QRectF box(left + slot * index + slot * 0.1, plot.bottom() - bar, slot * 0.8, bar);
    painter.fillRect(box, color);
    painter.setPen(Qt::black);
    painter.drawText(QRectF(box.left() - slot * 0.1, box.top() - 18, slot, 16), Qt::AlignHCenter,
                     format_value(value, unit()));
    painter.save();
    painter.translate(box.center().x(), plot.bottom() + 6);
    painter.rotate(30);
    painter.drawText(QPointF(0, 10), QString::fromStdString(bin.label));
    painter.restore();
  }
}

} // namespace commlens::viewer
