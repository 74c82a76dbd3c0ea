#pragma once
// Per rank: its calls, its wall time inside MPI and NCCL calls with that time's share of the
// application's, the MPI and NCCL calls' own times and how much of both was set-up
// (communication_time.hpp), dropped events.
#include "communication_time.hpp"

#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

class RankTableModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column {
    Rank,
    Host,
    Calls,
    CommunicationTime,
    CommunicationShare,
    MpiTime,
    NcclTime,
    SetupTime,
    Dropped,
    Finalized,
    ColumnCount
  };

  using QAbstractTableModel::QAbstractTableModel;
  void set_ranks(std::vector<analysis::RankTime> ranks, std::map<int, viewer::CommunicationTime> split = {});

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  std::vector<analysis::RankTime> ranks_;
  std::map<int, viewer::CommunicationTime> split_;
};

} // namespace commlens::viewer
