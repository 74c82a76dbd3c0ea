#pragma once
// A bar chart of one function's message-size histogram; one bar per power-of-two bin, on a value
// axis whose ticks carry the metric's unit.
#include "chart_axis.hpp"

#include "commlens/analysis/report.hpp"

#include <QWidget>

namespace commlens::viewer {

enum class HistogramMetric { Calls, Bytes, Time };

class HistogramChart : public QWidget {
  Q_OBJECT
public:
  explicit HistogramChart(QWidget* parent = nullptr);
  void set_histogram(QString title, std::vector<analysis::SizeBinStats> bins, HistogramMetric metric);

  const std::vector<analysis::SizeBinStats>& bins() const { return bins_; }
  HistogramMetric metric() const { return metric_; }
  // The bar height of one bin in the chosen metric (calls, bytes sent + received, or ns).
  double value_of(const analysis::SizeBinStats& bin) const;
  // The axes as drawn: the value axis' tick labels (bottom up) and both titles.
  QStringList y_tick_labels() const;
  QString y_axis_title() const;
  QString x_axis_title() const;

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  ValueUnit unit() const;
  double highest() const;

  QString title_;
  std::vector<analysis::SizeBinStats> bins_;
  HistogramMetric metric_ = HistogramMetric::Calls;
};

} // namespace commlens::viewer
