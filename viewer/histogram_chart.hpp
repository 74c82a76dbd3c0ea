#pragma once
// A bar chart of message-size histograms: one group per power-of-two bin, one bar in it per series
// (a function of this run, or of a second run opened to compare), on a value axis whose ticks carry
// the metric's unit, with a legend when several series are overlaid.
#include "chart_axis.hpp"

#include "commlens/analysis/report.hpp"

#include <QColor>
#include <QWidget>

class QPainter;

namespace commlens::viewer {

enum class HistogramMetric { Calls, Bytes, Time };

struct HistogramSeries {
  QString name; // the function, and for a second run which file it is
  QColor color;
  std::vector<analysis::SizeBinStats> bins;
};

class HistogramChart : public QWidget {
  Q_OBJECT
public:
  explicit HistogramChart(QWidget* parent = nullptr);
  void set_histograms(QString title, std::vector<HistogramSeries> series, HistogramMetric metric);

  const std::vector<HistogramSeries>& series() const { return series_; }
  // The first series' bins; empty without series.
  const std::vector<analysis::SizeBinStats>& bins() const;
  HistogramMetric metric() const { return metric_; }
  // The bar height of one bin in the chosen metric (calls, bytes sent + received, or ns).
  double value_of(const analysis::SizeBinStats& bin) const;
  // The size bins along the x axis: every series' bins, ascending.
  std::vector<int> size_bins() const;
  // The legend's entries (the series' names), drawn when there are several series.
  QStringList legend() const;
  // The axes as drawn: the value axis' tick labels (bottom up) and both titles.
  QStringList y_tick_labels() const;
  QString y_axis_title() const;
  QString x_axis_title() const;

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  ValueUnit unit() const;
  double highest() const;
  QString bin_label(int size_bin) const;
  void paint_axes(QPainter& painter, const QRect& plot, const std::vector<double>& ticks) const;
  void paint_legend(QPainter& painter) const;

  QString title_;
  std::vector<HistogramSeries> series_;
  HistogramMetric metric_ = HistogramMetric::Calls;
};

} // namespace commlens::viewer
