#include "histogram_chart.hpp"

#include <QPainter>

#include <algorithm>

namespace commlens::viewer {
namespace {

constexpr int kLegendRowHeight = 18;

} // namespace

HistogramChart::HistogramChart(QWidget* parent) : QWidget(parent) {
  setMinimumSize(400, 250);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
}

void HistogramChart::set_histograms(QString title, std::vector<HistogramSeries> series,
                                    HistogramMetric metric) {
  title_ = std::move(title);
  series_ = std::move(series);
  metric_ = metric;
  update();
}

const std::vector<analysis::SizeBinStats>& HistogramChart::bins() const {
  static const std::vector<analysis::SizeBinStats> kNone;
  return series_.empty() ? kNone : series_.front().bins;
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
  for (const auto& series : series_)
    for (const auto& bin : series.bins)
      highest = std::max(highest, value_of(bin));
  return highest;
}

std::vector<int> HistogramChart::size_bins() const {
  std::vector<int> bins;
  for (const auto& series : series_)
    for (const auto& bin : series.bins)
      bins.push_back(bin.size_bin);
  std::sort(bins.begin(), bins.end());
  bins.erase(std::unique(bins.begin(), bins.end()), bins.end());
  return bins;
}

QString HistogramChart::bin_label(int size_bin) const {
  for (const auto& series : series_)
    for (const auto& bin : series.bins)
      if (bin.size_bin == size_bin)
        return QString::fromStdString(bin.label);
  return {};
}

QStringList HistogramChart::legend() const {
  QStringList names;
  if (series_.size() > 1)
    for (const auto& series : series_)
      names << series.name;
  return names;
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

void HistogramChart::paint_axes(QPainter& painter, const QRect& plot,
                                const std::vector<double>& ticks) const {
  // Value axis: grid lines under the bars, tick labels with units, the title turned along it.
  for (const double tick : ticks) {
    const int y = plot.bottom() - static_cast<int>(plot.height() * tick / ticks.back());
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
}

void HistogramChart::paint_legend(QPainter& painter) const {
  // One row under the title, entries left to right.
  int x = 96;
  for (const auto& series : series_) {
    if (series_.size() < 2)
      break;
    painter.fillRect(x, 26 + 4, 10, 10, series.color);
    painter.setPen(Qt::black);
    const int advance = fontMetrics().horizontalAdvance(series.name);
    painter.drawText(QRect(x + 14, 26, advance + 4, kLegendRowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                     series.name);
    x += advance + 34;
  }
}

void HistogramChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.drawText(QRect(0, 4, width(), 20), Qt::AlignHCenter, title_);
  const auto size_bins = this->size_bins();
  if (size_bins.empty()) {
    painter.drawText(rect(), Qt::AlignCenter, tr("No calls of this function in this selection."));
    return;
  }
  paint_legend(painter);
  const auto ticks = axis_ticks(highest(), unit());
  const QRect plot = rect().adjusted(96, 44 + (series_.size() > 1 ? kLegendRowHeight : 0), -20, -86);
  paint_axes(painter, plot, ticks);

  // Few bins would make slabs: a group is at most kMaxSlot wide, the groups centred.
  constexpr double kMaxSlot = 140;
  const auto groups = static_cast<double>(size_bins.size());
  const double slot = std::min(kMaxSlot, static_cast<double>(plot.width()) / groups);
  const double left = plot.left() + (plot.width() - slot * groups) / 2;
  const double bar_width = slot * 0.8 / static_cast<double>(series_.size());
  for (std::size_t group = 0; group < size_bins.size(); ++group) {
    const double group_left = left + slot * static_cast<double>(group) + slot * 0.1;
    for (std::size_t index = 0; index < series_.size(); ++index) {
      const auto& bins = series_[index].bins;
      const auto bin = std::find_if(bins.begin(), bins.end(), [&](const auto& candidate) {
        return candidate.size_bin == size_bins[group];
      });
      if (bin == bins.end())
        continue;
      const double value = value_of(*bin);
      const double bar = plot.height() * value / ticks.back();
      const QRectF box(group_left + bar_width * static_cast<double>(index), plot.bottom() - bar, bar_width,
                       bar);
      painter.fillRect(box, series_[index].color);
      // Value labels where they fit over their bar.
      const auto text = format_value(value, unit());
      if (fontMetrics().horizontalAdvance(text) <= bar_width + 8) {
        painter.setPen(Qt::black);
        painter.drawText(QRectF(box.left() - 4, box.top() - 18, bar_width + 8, 16), Qt::AlignHCenter, text);
      }
    }
    painter.save();
    painter.setPen(Qt::black);
    painter.translate(group_left + slot * 0.4, plot.bottom() + 6);
    painter.rotate(30);
    painter.drawText(QPointF(0, 10), bin_label(size_bins[group]));
    painter.restore();
  }
}

} // namespace commlens::viewer
