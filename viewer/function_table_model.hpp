#pragma once
// Calls, bytes and time per MPI function (most time first), as the Summary view lists them.
// Qt::DisplayRole gives formatted text; kRawValueRole the exact number, for sorting and tests.
#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

inline constexpr int kRawValueRole = Qt::UserRole + 1;

class FunctionTableModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Name, Calls, BytesSent, BytesReceived, Time, Share, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;
  void set_functions(std::vector<analysis::FunctionStats> functions);
  // The row of `name`, or -1.
  int row_of(const QString& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  std::vector<analysis::FunctionStats> functions_;
};

} // namespace commlens::viewer
