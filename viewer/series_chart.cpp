#include "series_chart.hpp"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace commlens::viewer {
namespace {

constexpr int kTimeTicks = 6;

} // namespace

SeriesChart::SeriesChart(QWidget* parent) : QWidget(parent) {
  setMinimumSize(300, 180);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
}

void SeriesChart::set_series(QString title, std::vector<Series> series, std::int64_t span_ns, ValueUnit unit,
                             QString empty_text) {
  title_ = std::move(title);
  series_ = std::move(series);
  span_ns_ = span_ns;
  unit_ = unit;
  empty_text_ = std::move(empty_text);
  update();
}

double SeriesChart::highest() const {
  double highest = 0;
  for (const auto& line : series_)
    for (const double value : line.values)
      highest = std::max(highest, value);
  return highest;
}

QStringList SeriesChart::value_tick_labels() const {
  QStringList labels;
  for (const double tick : axis_ticks(highest(), unit_, 4))
    labels << format_value(tick, unit_);
  return labels;
}

QStringList SeriesChart::time_tick_labels() const {
  QStringList labels;
  for (const double tick : axis_ticks(static_cast<double>(span_ns_), ValueUnit::Nanoseconds, kTimeTicks))
    if (tick <= static_cast<double>(span_ns_))
      labels << format_value(tick, ValueUnit::Nanoseconds);
  return labels;
}

void SeriesChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  painter.drawText(QRect(6, 2, width() - 12, 18), Qt::AlignLeft | Qt::AlignVCenter, title_);
  painter.setFont(font());
  if (series_.empty() || span_ns_ <= 0) {
    painter.setPen(Qt::darkGray);
    painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, empty_text_);
    return;
  }
  const QRect plot = rect().adjusted(80, 26, -20, -40);
  const auto value_ticks = axis_ticks(highest(), unit_, 4);
  const double top = value_ticks.back();
  for (const double tick : value_ticks) {
    const int y = plot.bottom() - static_cast<int>(plot.height() * tick / top);
    painter.setPen(QColor(230, 230, 230));
    painter.drawLine(plot.left(), y, plot.right(), y);
    painter.setPen(Qt::darkGray);
    painter.drawText(QRect(0, y - 8, plot.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                     format_value(tick, unit_));
  }
  for (const double tick : axis_ticks(static_cast<double>(span_ns_), ValueUnit::Nanoseconds, kTimeTicks)) {
    if (tick > static_cast<double>(span_ns_))
      break;
    const int x = plot.left() + static_cast<int>(plot.width() * tick / static_cast<double>(span_ns_));
    painter.drawLine(x, plot.bottom(), x, plot.bottom() + 4);
    painter.drawText(QRect(x - 40, plot.bottom() + 4, 80, 16), Qt::AlignHCenter,
                     format_value(tick, ValueUnit::Nanoseconds));
  }
  painter.drawText(QRect(plot.left(), height() - 18, plot.width(), 16), Qt::AlignHCenter,
                   tr("time since the first traced call"));
  painter.setPen(Qt::gray);
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  painter.drawLine(plot.bottomLeft(), plot.topLeft());
  int legend_x = plot.left() + 8, legend_y = plot.top() + 4;
  for (const auto& line : series_) {
    QPainterPath path;
    const double step =
        static_cast<double>(plot.width()) / static_cast<double>(std::max<std::size_t>(line.values.size(), 1));
    for (std::size_t index = 0; index < line.values.size(); ++index) {
      const QPointF point(plot.left() + step * (static_cast<double>(index) + 0.5),
                          plot.bottom() - plot.height() * line.values[index] / top);
      if (index == 0)
        path.moveTo(point);
      else
        path.lineTo(point);
    }
    painter.setPen(QPen(line.color, 2, line.style));
    painter.drawPath(path);
    const int entry_width = 28 + fontMetrics().horizontalAdvance(line.name);
    if (legend_x > plot.left() + 8 && legend_x + entry_width > plot.right()) { // wrap the legend
      legend_x = plot.left() + 8;
      legend_y += 16;
    }
    painter.drawLine(legend_x, legend_y + 5, legend_x + 10, legend_y + 5);
    painter.setPen(Qt::black);
    painter.drawText(legend_x + 14, legend_y + 9, line.name);
    legend_x += entry_width;
  }
}

} // namespace commlens::viewer
