#pragma once
// A bar chart of one function's message-size histogram; one bar per power-of-two bin.
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

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  QString label_of(double value) const;

  QString title_;
  std::vector<analysis::SizeBinStats> bins_;
  HistogramMetric metric_ = HistogramMetric::Calls;
};

} // namespace commlens::viewer
