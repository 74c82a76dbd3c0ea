#pragma once
// Traffic of one kind (MPI point-to-point, NCCL point-to-point, NCCL collectives: breakdowns.hpp)
// between run ranks as a square table: row = sender, column = receiver, in bytes or in operations
// (messages, or collective calls). The heat map paints it; tests read exact values from it.
#include "commlens/analysis/breakdowns.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

enum class PartnerMetric { Bytes, Messages };

class PartnerMatrixModel : public QAbstractTableModel {
  Q_OBJECT
public:
  using QAbstractTableModel::QAbstractTableModel;
  // The cells of `kind` among `cells`; `ranks` rows and columns at least.
  void set_traffic(int ranks, const std::vector<analysis::PartnerCell>& cells, analysis::TrafficKind kind);
  analysis::TrafficKind kind() const { return kind_; }
  void set_metric(PartnerMetric metric);
  PartnerMetric metric() const { return metric_; }
  std::uint64_t value(int from, int to) const;
  std::uint64_t highest() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
  int ranks_ = 0;
  std::vector<double> bytes_; // ranks_ x ranks_, row-major; collectives' shares are fractions
  std::vector<std::uint64_t> messages_;
  PartnerMetric metric_ = PartnerMetric::Bytes;
  analysis::TrafficKind kind_ = analysis::TrafficKind::MpiPointToPoint;
};

} // namespace commlens::viewer
