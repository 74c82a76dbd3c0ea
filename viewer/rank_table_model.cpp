#include "rank_table_model.hpp"

#include "format.hpp"
#include "function_table_model.hpp"

namespace commlens::viewer {

void RankTableModel::set_ranks(std::vector<analysis::RankTime> ranks,
                               std::map<int, viewer::CommunicationTime> split) {
  beginResetModel();
  ranks_ = std::move(ranks);
  split_ = std::move(split);
  endResetModel();
}

int RankTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(ranks_.size());
}

int RankTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RankTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != kRawValueRole))
    return {};
  const auto& rank = ranks_[static_cast<std::size_t>(index.row())];
  const bool raw = role == kRawValueRole;
  const auto found = split_.find(rank.rank);
  const auto split = found == split_.end() ? viewer::CommunicationTime{} : found->second;
  const auto duration = [raw](std::int64_t ns) {
    return raw ? QVariant::fromValue<qlonglong>(ns) : QVariant(format_duration(ns));
  };
  switch (index.column()) {
  case Rank:
    return rank.rank;
  case Host:
    return QString::fromStdString(rank.host);
  case Calls:
    return raw ? QVariant::fromValue<qulonglong>(rank.calls) : QVariant(format_count(rank.calls));
  case CommunicationTime:
    return duration(rank.mpi_ns);
  case MpiTime:
    return duration(split.mpi_ns);
  case NcclTime:
    return duration(split.nccl_ns);
  case SetupTime:
    return duration(split.setup_ns());
  case CommunicationShare:
    if (!rank.mpi_share)
      return raw ? QVariant() : QVariant(tr("unknown (not finalized)"));
    return raw ? QVariant(*rank.mpi_share)
               : QVariant(QStringLiteral("%1 %").arg(100.0 * *rank.mpi_share, 0, 'f', 1));
  case Dropped:
    return raw ? QVariant::fromValue<qulonglong>(rank.dropped_events)
               : QVariant(format_count(rank.dropped_events));
  case Finalized:
    return raw ? QVariant(rank.finalized) : QVariant(rank.finalized ? tr("yes") : tr("no"));
  default:
    return {};
  }
}

QVariant RankTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  static const QStringList kHeaders = {
      tr("Rank"),           tr("Host"),      tr("Calls"),      tr("In MPI and NCCL calls"),
      tr("Share of run"),   tr("MPI calls"), tr("NCCL calls"), tr("of them set-up"),
      tr("Dropped events"), tr("Finalized")};
  return kHeaders.value(section);
}

} // namespace commlens::viewer
