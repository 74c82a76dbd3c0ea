#pragma once
// Point-to-point traffic between world ranks as a square table: row = sender, column = receiver,
// in bytes or messages. The heat map paints it; tests read exact values from it.
#include "commlens/analysis/report.hpp"

#include <QAbstractTableModel>

namespace commlens::viewer {

enum class PartnerMetric { Bytes, Messages };

class PartnerMatrixModel : public QAbstractTableModel {
  Q_OBJECT
public:
  using QAbstractTableModel::QAbstractTableModel;
  void set_traffic(int ranks, const std::vector<analysis::PartnerTraffic>& traffic);
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
  std::vector<std::uint64_t> bytes_, messages_; // ranks_ x ranks_, row-major
  PartnerMetric metric_ = PartnerMetric::Bytes;
};

} // namespace commlens::viewer
