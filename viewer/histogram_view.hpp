#pragma once
// Histograms tab: the power-of-two message-size histogram of one function, as calls, bytes or
// time, for the whole run or one MPI_Pcontrol phase. It opens on the busiest function. The bars
// are painted by HistogramChart.
#include "histogram_chart.hpp"
#include "loaded_database.hpp"

#include <QWidget>

class QComboBox;

namespace commlens::viewer {

// The function a histogram opens on: the one that moved the most bytes, else the one with the most
// time (`functions` is most time first); -1 when there is none.
int busiest_function(const std::vector<analysis::FunctionStats>& functions);

class HistogramView : public QWidget {
  Q_OBJECT
public:
  explicit HistogramView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // Selects by visible text; false when the combo holds no such entry.
  bool select_function(const QString& name);
  bool select_phase(std::optional<int> phase);
  void select_metric(HistogramMetric metric);
  QString selected_function() const;
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
