#include "bar_chart.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace commlens::viewer {
namespace {

constexpr int kTitleHeight = 22, kAxisHeight = 34, kLegendRowHeight = 18, kMaxBarHeight = 26;
constexpr int kColumnAxisWidth = 84, kColumnLabelHeight = 20, kMaxColumnWidth = 90;
constexpr int kPixelsPerTick = 90;       // room for a label such as "500 ms" and a gap
constexpr int kPixelsPerColumnTick = 40; // stacked labels need only their height and a gap

} // namespace

double Bar::total() const {
  double sum = 0;
  for (const auto& segment : segments)
    sum += segment.value;
  return sum;
}

BarChart::BarChart(QWidget* parent) : QWidget(parent) {
  setMinimumSize(260, 160);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
  setMouseTracking(true);
}

void BarChart::set_orientation(Qt::Orientation orientation) {
  orientation_ = orientation;
  update();
}

void BarChart::set_bars(QString title, std::vector<Bar> bars, ValueUnit unit, QString empty_text) {
  title_ = std::move(title);
  bars_ = std::move(bars);
  unit_ = unit;
  empty_text_ = std::move(empty_text);
  update();
}

QSize BarChart::sizeHint() const {
  return {420, 260};
}

std::vector<double> BarChart::ticks() const {
  double highest = 0;
  for (const auto& bar : bars_)
    highest = std::max(highest, bar.total());
  // As many ticks as their labels have room for, so they never run into each other.
  const int room =
      columns() ? plot_area().height() / kPixelsPerColumnTick : plot_area().width() / kPixelsPerTick;
  return axis_ticks(highest, unit_, std::clamp(room, 1, 6));
}

double BarChart::axis_end() const {
  return ticks().back();
}

QStringList BarChart::tick_labels() const {
  QStringList labels;
  for (const double tick : ticks())
    labels << format_value(tick, unit_);
  return labels;
}

QString BarChart::axis_title() const {
  return unit_name(unit_);
}

QStringList BarChart::legend_names() const {
  // A legend only where a bar is split: single-segment bars are named by their labels.
  const bool split =
      std::any_of(bars_.begin(), bars_.end(), [](const Bar& bar) { return bar.segments.size() > 1; });
  QStringList names;
  for (const auto& bar : bars_)
    for (const auto& segment : bar.segments)
      if (split && !names.contains(segment.name))
        names << segment.name;
  return names;
}

std::vector<QRect> BarChart::legend_boxes(int top) const {
  // Entries flow left to right and wrap, so every name is shown whole.
  std::vector<QRect> boxes;
  int x = 8, y = top;
  for (const auto& name : legend_names()) {
    const int entry = 24 + fontMetrics().horizontalAdvance(name);
    if (x > 8 && x + entry > width() - 8) {
      x = 8;
      y += kLegendRowHeight;
    }
    boxes.emplace_back(x, y, entry, kLegendRowHeight);
    x += entry;
  }
  return boxes;
}

QRect BarChart::plot_area() const {
  const auto legend = legend_boxes(0);
  const int legend_height = legend.empty() ? 0 : legend.back().bottom() + 1;
  const int bars = static_cast<int>(std::max<std::size_t>(bars_.size(), 1));
  if (columns()) {
    // Tick labels and the turned axis title on the left, a row of column labels under the plot.
    QRect plot =
        rect().adjusted(kColumnAxisWidth, kTitleHeight + 6, -20, -(kColumnLabelHeight + legend_height));
    plot.setWidth(std::max(std::min(plot.width(), kMaxColumnWidth * bars), 1));
    return plot;
  }
  int label_width = 0;
  for (const auto& bar : bars_)
    label_width = std::max(label_width, fontMetrics().horizontalAdvance(bar.label));
  label_width = std::min(label_width + 10, width() / 2); // names whole where the chart has room
  QRect plot = rect().adjusted(label_width, kTitleHeight, -30, -(kAxisHeight + legend_height));
  plot.setHeight(std::max(std::min(plot.height(), kMaxBarHeight * bars), 1));
  return plot;
}

QRectF BarChart::segment_rect(const QRect& plot, double end, std::size_t index, double from,
                              double to) const {
  const double length = columns() ? plot.height() : plot.width();
  const double per_value = end > 0 ? length / end : 0;
  const double slot =
      static_cast<double>(columns() ? plot.width() : plot.height()) / static_cast<double>(bars_.size());
  const double thickness = std::max(1.0, slot * 0.75);
  const double across = slot * static_cast<double>(index) + (slot - thickness) / 2;
  if (columns())
    return {plot.left() + across, plot.bottom() - to * per_value, thickness, (to - from) * per_value};
  return {plot.left() + from * per_value, plot.top() + across, (to - from) * per_value, thickness};
}

void BarChart::paint_value_axis(QPainter& painter, const QRect& plot) const {
  const auto ticks = tick_labels();
  const auto last = std::max<qsizetype>(ticks.size() - 1, 1);
  for (qsizetype index = 0; index < ticks.size(); ++index) {
    painter.setPen(QColor(225, 225, 225));
    if (columns()) {
      const int y = plot.bottom() - static_cast<int>(plot.height() * index / last);
      painter.drawLine(plot.left(), y, plot.right(), y);
      painter.setPen(Qt::darkGray);
      painter.drawText(QRect(0, y - 8, plot.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter, ticks[index]);
    } else {
      const int x = plot.left() + static_cast<int>(plot.width() * index / last);
      painter.drawLine(x, plot.top(), x, plot.bottom());
      painter.setPen(Qt::darkGray);
      painter.drawText(QRect(x - 45, plot.bottom() + 2, 90, 16), Qt::AlignHCenter | Qt::AlignTop,
                       ticks[index]);
    }
  }
  if (!columns()) {
    painter.drawText(QRect(plot.left(), plot.bottom() + 17, plot.width(), 16), Qt::AlignHCenter,
                     axis_title());
    return;
  }
  painter.save();
  painter.translate(10, plot.center().y());
  painter.rotate(-90);
  painter.drawText(QRect(-plot.height() / 2, -8, plot.height(), 16), Qt::AlignCenter, axis_title());
  painter.restore();
}

void BarChart::paint_bar_label(QPainter& painter, const QRect& plot, std::size_t index) const {
  const double slot =
      static_cast<double>(columns() ? plot.width() : plot.height()) / static_cast<double>(bars_.size());
  const auto& label = bars_[index].label;
  painter.setPen(Qt::black);
  if (columns()) {
    const QRectF box(plot.left() + slot * static_cast<double>(index), plot.bottom() + 2, slot, 16);
    painter.drawText(box, Qt::AlignHCenter | Qt::AlignTop,
                     fontMetrics().elidedText(label, Qt::ElideMiddle, static_cast<int>(slot)));
  } else if (slot >= fontMetrics().height() - 2) {
    const int room = plot.left() - 8;
    painter.drawText(QRectF(2, plot.top() + slot * static_cast<double>(index), room, slot),
                     Qt::AlignRight | Qt::AlignVCenter,
                     fontMetrics().elidedText(label, Qt::ElideMiddle, room));
  }
}

void BarChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setPen(Qt::black);
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  painter.drawText(QRect(6, 2, width() - 12, kTitleHeight - 4), Qt::AlignLeft | Qt::AlignVCenter, title_);
  painter.setFont(font());
  if (bars_.empty()) {
    painter.setPen(Qt::darkGray);
    painter.drawText(rect().adjusted(8, kTitleHeight, -8, 0), Qt::AlignCenter | Qt::TextWordWrap,
                     empty_text_);
    return;
  }
  const QRect plot = plot_area();
  // The axis once: it measures every label, and a chart of 64 ranks has hundreds of segments.
  const double end = axis_end();
  // Grid and tick labels first, so bars paint over the grid lines.
  paint_value_axis(painter, plot);
  for (std::size_t index = 0; index < bars_.size(); ++index) {
    double from = 0;
    for (const auto& segment : bars_[index].segments) {
      painter.fillRect(segment_rect(plot, end, index, from, from + segment.value), segment.color);
      from += segment.value;
    }
    paint_bar_label(painter, plot, index);
  }
  painter.setPen(Qt::gray);
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  painter.drawLine(plot.topLeft(), plot.bottomLeft());

  // The legend sits right under the axis (or the column labels).
  const auto names = legend_names();
  const auto boxes = legend_boxes(plot.bottom() + (columns() ? kColumnLabelHeight : kAxisHeight) + 2);
  for (std::size_t index = 0; index < boxes.size(); ++index) {
    const auto& name = names[static_cast<qsizetype>(index)];
    QColor color;
    for (const auto& bar : bars_)
      for (const auto& segment : bar.segments)
        if (segment.name == name)
          color = segment.color;
    const auto& box = boxes[index];
    painter.fillRect(box.left(), box.top() + 4, 10, 10, color);
    painter.setPen(Qt::black);
    painter.drawText(box.adjusted(14, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, name);
  }
}

QString BarChart::describe_at(QPoint position) const {
  if (bars_.empty())
    return {};
  const QRect plot = plot_area();
  if (!plot.contains(position))
    return {};
  const double across = columns() ? position.x() - plot.left() : position.y() - plot.top();
  const double slot =
      static_cast<double>(columns() ? plot.width() : plot.height()) / static_cast<double>(bars_.size());
  const auto index = static_cast<std::size_t>(across / slot);
  if (index >= bars_.size())
    return {};
  const auto& bar = bars_[index];
  const double end = axis_end();
  const double along = columns() ? plot.bottom() - position.y() : position.x() - plot.left();
  double value_at = end > 0 ? along * end / (columns() ? plot.height() : plot.width()) : 0;
  for (const auto& segment : bar.segments) {
    if (value_at <= segment.value)
      return QStringLiteral("%1: <b>%2</b> %3")
          .arg(bar.label.toHtmlEscaped(), segment.name.toHtmlEscaped(), format_value(segment.value, unit_));
    value_at -= segment.value;
  }
  return QStringLiteral("%1: %2 in all").arg(bar.label.toHtmlEscaped(), format_value(bar.total(), unit_));
}

bool BarChart::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const auto text = describe_at(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

} // namespace commlens::viewer
