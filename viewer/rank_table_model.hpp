#pragma once
// Time in MPI per rank with its share of the application's time, calls and dropped events.
#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

class RankTableModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Rank, Host, Calls, MpiTime, MpiShare, Dropped, Finalized, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;
  void set_ranks(std::vector<analysis::RankTime> ranks);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  std::vector<analysis::RankTime> ranks_;
};

} // namespace commlens::viewer
