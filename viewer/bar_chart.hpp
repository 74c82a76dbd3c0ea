#pragma once
// A horizontal bar chart: one labelled bar per item, split into coloured segments (time in MPI per
// rank split by function, say), on a value axis whose ticks carry their unit, with a legend of the
// segments and a tooltip per segment. The summary and copy-path views draw their pictures with it.
#include "chart_axis.hpp"

#include <QColor>
#include <QWidget>

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
  QStringList legend_names() const;
  // Where each legend entry goes, the first row at `top`.
  std::vector<QRect> legend_boxes(int top) const;
  std::vector<double> ticks() const;
  double axis_end() const;

  QString title_, empty_text_;
  std::vector<Bar> bars_;
  ValueUnit unit_ = ValueUnit::Count;
};

} // namespace commlens::viewer
