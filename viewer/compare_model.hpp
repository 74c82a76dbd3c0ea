#pragma once
// Two runs side by side, per function and per message-size bin: calls, mean time per call in each,
// and the ratio B / A of the mean times (below 1: B is faster). A function row is followed by its
// size rows; sizes present in one run only show an empty ratio.
#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

struct CompareRow {
  QString function;
  QString size; // empty on a function's total row
  std::uint64_t calls_a = 0, calls_b = 0;
  std::int64_t time_a_ns = 0, time_b_ns = 0;
  std::optional<double> mean_time_ratio() const;
};

class CompareModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Function, Size, CallsA, CallsB, MeanA, MeanB, Ratio, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;
  void compare(const std::vector<analysis::FunctionStats>& a, const std::vector<analysis::FunctionStats>& b);
  const std::vector<CompareRow>& rows() const { return rows_; }
  // The total row of `function`, or null.
  const CompareRow* function_row(const QString& function) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  std::vector<CompareRow> rows_;
};

} // namespace commlens::viewer
