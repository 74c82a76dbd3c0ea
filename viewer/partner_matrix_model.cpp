#include "partner_matrix_model.hpp"

#include "format.hpp"
#include "function_table_model.hpp"

#include <algorithm>

namespace commlens::viewer {

void PartnerMatrixModel::set_traffic(int ranks, const std::vector<analysis::PartnerTraffic>& traffic) {
  beginResetModel();
  // A peer outside the recorded ranks (a rank that never merged) still gets its row and column.
  for (const auto& pair : traffic)
    ranks = std::max({ranks, pair.from + 1, pair.to + 1});
  ranks_ = ranks;
  bytes_.assign(static_cast<std::size_t>(ranks) * ranks, 0);
  messages_.assign(bytes_.size(), 0);
  for (const auto& pair : traffic) {
    const auto cell = static_cast<std::size_t>(pair.from) * ranks + pair.to;
    bytes_[cell] += pair.bytes;
    messages_[cell] += pair.messages;
  }
  endResetModel();
}

void PartnerMatrixModel::set_metric(PartnerMetric metric) {
  metric_ = metric;
  emit dataChanged(index(0, 0), index(ranks_ - 1, ranks_ - 1));
}

std::uint64_t PartnerMatrixModel::value(int from, int to) const {
  const auto cell = static_cast<std::size_t>(from) * ranks_ + to;
  return metric_ == PartnerMetric::Bytes ? bytes_.at(cell) : messages_.at(cell);
}

std::uint64_t PartnerMatrixModel::highest() const {
  const auto& values = metric_ == PartnerMetric::Bytes ? bytes_ : messages_;
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

int PartnerMatrixModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ranks_;
}

int PartnerMatrixModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ranks_;
}

QVariant PartnerMatrixModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid())
    return {};
  const auto amount = value(index.row(), index.column());
  if (role == kRawValueRole)
    return QVariant::fromValue<qulonglong>(amount);
  if (role == Qt::DisplayRole)
    return metric_ == PartnerMetric::Bytes ? format_bytes(amount) : format_count(amount);
  return {};
}

QVariant PartnerMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole)
    return {};
  return orientation == Qt::Vertical ? tr("from %1").arg(section) : tr("to %1").arg(section);
}

} // namespace commlens::viewer
