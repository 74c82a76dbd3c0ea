#pragma once
// Histograms tab: power-of-two message-size histograms as calls, bytes or time, for the whole run
// or one MPI_Pcontrol phase. The function list takes several functions (Ctrl or Shift + click),
// overlaid with a legend; a second run (opened to compare, as the compare tab's) is overlaid too,
// each function of it beside the same function of this run. It opens on the busiest function. The
// bars are painted by HistogramChart.
#include "histogram_chart.hpp"
#include "loaded_database.hpp"

#include <QWidget>

class QComboBox;
class QLabel;
class QListWidget;
class QPushButton;

namespace commlens::viewer {

// The function a histogram opens on: the one that moved the most bytes, else the one with the most
// time (`functions` is most time first); -1 when there is none.
int busiest_function(const std::vector<analysis::FunctionStats>& functions);

class HistogramView : public QWidget {
  Q_OBJECT
public:
  explicit HistogramView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // The run overlaid on this one; null takes it away.
  void set_second_database(std::shared_ptr<const LoadedDatabase> database);
  // Selects only this function, by name; false when the list holds no such entry.
  bool select_function(const QString& name);
  // Selects these functions together (overlaid); false when one of them is not in the list.
  bool select_functions(const QStringList& names);
  bool select_phase(std::optional<int> phase);
  void select_metric(HistogramMetric metric);
  // The first selected function, and all of them in list order.
  QString selected_function() const;
  QStringList selected_functions() const;
  const HistogramChart& chart() const { return *chart_; }

signals:
  // The "Overlay a second run" button: the window asks for a file and opens it for comparison.
  void second_run_requested();

private:
  void refresh();
  // The histograms of `database`'s functions in the chosen phase (the whole run's are in its report).
  std::vector<analysis::FunctionStats> functions_of(const LoadedDatabase& database) const;

  std::shared_ptr<const LoadedDatabase> database_, second_;
  QListWidget* function_list_;
  QComboBox* phase_box_;
  QComboBox* metric_box_;
  QLabel* second_label_;
  QPushButton* clear_second_;
  HistogramChart* chart_;
};

} // namespace commlens::viewer
