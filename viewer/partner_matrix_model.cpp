#include "partner_matrix_model.hpp"

#include "format.hpp"
#include "function_table_model.hpp"

#include <algorithm>
#include <cmath>

namespace commlens::viewer {

void PartnerMatrixModel::set_traffic(int ranks, const std::vector<analysis::PartnerCell>& cells,
                                     analysis::TrafficKind kind) {
  beginResetModel();
  kind_ = kind;
  // A peer outside the recorded ranks (a rank that never merged) still gets its row and column.
  for (const auto& cell : cells)
    if (cell.kind == kind)
      ranks = std::max({ranks, cell.from + 1, cell.to + 1});
  ranks_ = ranks;
  bytes_.assign(static_cast<std::size_t>(ranks) * ranks, 0);
  messages_.assign(bytes_.size(), 0);
  for (const auto& cell : cells) {
    if (cell.kind != kind)
      continue;
    const auto index = static_cast<std::size_t>(cell.from) * ranks + cell.to;
    bytes_[index] += cell.bytes;
    messages_[index] += cell.operations;
  }
  endResetModel();
}

void PartnerMatrixModel::set_metric(PartnerMetric metric) {
  metric_ = metric;
  emit dataChanged(index(0, 0), index(ranks_ - 1, ranks_ - 1));
}

std::uint64_t PartnerMatrixModel::value(int from, int to) const {
  const auto cell = static_cast<std::size_t>(from) * ranks_ + to;
  return metric_ == PartnerMetric::Bytes ? static_cast<std::uint64_t>(std::llround(bytes_.at(cell)))
                                         : messages_.at(cell);
}

std::uint64_t PartnerMatrixModel::highest() const {
  std::uint64_t highest = 0;
  for (int from = 0; from < ranks_; ++from)
    for (int to = 0; to < ranks_; ++to)
      highest = std::max(highest, value(from, to));
  return highest;
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
