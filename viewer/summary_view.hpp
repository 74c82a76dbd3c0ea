#pragma once
// Summary: run metadata (mode, collectors, command line...), time in MPI per rank, the functions
// with the most time, and the dropped-event counts, which say how far the trace can be trusted.
#include "function_table_model.hpp"
#include "loaded_database.hpp"
#include "rank_table_model.hpp"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace commlens::viewer {

class SummaryView : public QWidget {
  Q_OBJECT
public:
  explicit SummaryView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);

  const FunctionTableModel& functions() const { return functions_; }
  const RankTableModel& ranks() const { return ranks_; }
  QString headline() const;

private:
  QLabel* headline_;
  QTableWidget* run_table_;
  FunctionTableModel functions_;
  RankTableModel ranks_;
};

} // namespace commlens::viewer
