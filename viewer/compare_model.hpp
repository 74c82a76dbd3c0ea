#pragma once
// Two sides side by side, per function and per message-size bin: calls, mean time per call in each,
// and the ratio B / A of the mean times (below 1: B is faster). The sides are two runs (from their
// reports) or the `mpi` and `runtime:*` implementations of one A/B run (from
// analysis::compare_implementations, which adds median ratios). A function row is followed by its
// size rows; sizes present on one side only show an empty ratio.
#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

struct CompareRow {
  QString function{};
  QString size{}; // empty on a function's total row
  std::uint64_t calls_a = 0, calls_b = 0;
  std::int64_t time_a_ns = 0, time_b_ns = 0;
  std::optional<double> median_ratio{}; // from per-call times, when the comparison has them
  std::optional<double> mean_time_ratio() const;
};

class CompareModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Function, Size, CallsA, CallsB, MeanA, MeanB, Ratio, MedianRatio, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;
  void compare(const std::vector<analysis::FunctionStats>& a, const std::vector<analysis::FunctionStats>& b);
  // Rows from the analysis layer's comparison, labelled with its sides' names.
  void compare(const analysis::Comparison& comparison);
  const std::vector<CompareRow>& rows() const { return rows_; }
  // The size row of `function` with size label `size`, or null.
  const CompareRow* size_row(const QString& function, const QString& size) const;
  // The total row of `function`, or null.
  const CompareRow* function_row(const QString& function) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  std::vector<CompareRow> rows_;
  QString label_a_ = QStringLiteral("A"), label_b_ = QStringLiteral("B");
  bool has_medians_ = false; // the median column shows only for comparisons with per-call times
};

} // namespace commlens::viewer
