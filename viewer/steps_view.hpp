#pragma once
// Steps tab: a run whose training loop marks its steps with MPI_Pcontrol(2) (docs/dl-guide.md) is
// shown one bar per step: its time, mean over ranks, split into the MPI functions it called and
// the time outside MPI (computing: forward, backward, optimizer). Below, the functions per step.
// Without steps it says why (the analysis layer's reason).
#include "bar_chart.hpp"
#include "loaded_database.hpp"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace commlens::viewer {

class StepsView : public QWidget {
  Q_OBJECT
public:
  explicit StepsView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  QString status() const;
  const BarChart& chart() const { return *chart_; }
  int function_rows() const;

private:
  QLabel* status_;
  BarChart* chart_;
  QTableWidget* functions_;
};

} // namespace commlens::viewer
