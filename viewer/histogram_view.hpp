#pragma once
// Histograms tab: the power-of-two message-size histogram of one function, as calls, bytes or
// time, for the whole run or one MPI_Pcontrol phase. The bars are painted by HistogramChart.
#include "histogram_chart.hpp"
#include "loaded_database.hpp"

#include <QWidget>

class QComboBox;

namespace commlens::viewer {

class HistogramView : public QWidget {
  Q_OBJECT
public:
  explicit HistogramView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // Selects by visible text; false when the combo holds no such entry.
  bool select_function(const QString& name);
  bool select_phase(std::optional<int> phase);
  void select_metric(HistogramMetric metric);
  const HistogramChart& chart() const { return *chart_; }

private:
  void refresh();

  std::shared_ptr<const LoadedDatabase> database_;
  QComboBox* function_box_;
  QComboBox* phase_box_;
  QComboBox* metric_box_;
  HistogramChart* chart_;
};

} // namespace commlens::viewer
