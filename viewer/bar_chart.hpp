#pragma once
// A bar chart: one labelled bar per item, split into coloured segments (time in MPI per rank split by
// function, say), on a value axis whose ticks carry their unit, with a legend of the segments and a
// tooltip per segment. Bars grow to the right (one row per item) or, as columns, upward (one column
// per item left to right: the steps of a training run). The summary, copy-path and steps views draw
// their pictures with it.
#include "chart_axis.hpp"

#include <QColor>
#include <QWidget>

class QPainter;

namespace commlens::viewer {

struct BarSegment {
  QString name;
  double value = 0;
  QColor color;
};

struct Bar {
  QString label;
  std::vector<BarSegment> segments;
  double total() const;
};

class BarChart : public QWidget {
  Q_OBJECT
public:
  explicit BarChart(QWidget* parent = nullptr);
  // `empty_text` is shown when there are no bars; a legend is drawn when segments have several names.
  void set_bars(QString title, std::vector<Bar> bars, ValueUnit unit, QString empty_text = {});
  // Qt::Horizontal (the default): bars grow to the right; Qt::Vertical: columns grow upward.
  void set_orientation(Qt::Orientation orientation);
  Qt::Orientation orientation() const { return orientation_; }

  const QString& title() const { return title_; }
  const std::vector<Bar>& bars() const { return bars_; }
  ValueUnit unit() const { return unit_; }
  // The value axis' tick labels, left to right, and its title ("time", "bytes").
  QStringList tick_labels() const;
  QString axis_title() const;
  // The segment drawn under `position`, as the tooltip names it; empty over nothing.
  QString describe_at(QPoint position) const;

  QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

private:
  QRect plot_area() const;
  bool columns() const { return orientation_ == Qt::Vertical; }
  // Where the part [from, to) of the value axis of bar `index` is drawn; `axis_end` is axis_end().
  QRectF segment_rect(const QRect& plot, double axis_end, std::size_t index, double from, double to) const;
  void paint_value_axis(QPainter& painter, const QRect& plot) const;
  void paint_bar_label(QPainter& painter, const QRect& plot, std::size_t index) const;
  QStringList legend_names() const;
  // Where each legend entry goes, the first row at `top`.
  std::vector<QRect> legend_boxes(int top) const;
  std::vector<double> ticks() const;
  double axis_end() const;

  QString title_, empty_text_;
  std::vector<Bar> bars_;
  ValueUnit unit_ = ValueUnit::Count;
  Qt::Orientation orientation_ = Qt::Horizontal;
};

} // namespace commlens::viewer
