#include "function_table_model.hpp"

#include "format.hpp"

namespace commlens::viewer {

void FunctionTableModel::set_functions(std::vector<analysis::FunctionStats> functions) {
  beginResetModel();
  functions_ = std::move(functions);
  endResetModel();
}

int FunctionTableModel::row_of(const QString& name) const {
  for (std::size_t row = 0; row < functions_.size(); ++row)
    if (QString::fromStdString(functions_[row].name) == name)
      return static_cast<int>(row);
  return -1;
}

int FunctionTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(functions_.size());
}

int FunctionTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant FunctionTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != kRawValueRole && role != Qt::TextAlignmentRole))
    return {};
  if (role == Qt::TextAlignmentRole)
    return index.column() == Name ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                  : int(Qt::AlignRight | Qt::AlignVCenter);
  const auto& function = functions_[static_cast<std::size_t>(index.row())];
  const bool raw = role == kRawValueRole;
  switch (index.column()) {
  case Name:
    return QString::fromStdString(function.name);
  case Calls:
    return raw ? QVariant::fromValue<qulonglong>(function.calls) : QVariant(format_count(function.calls));
  case BytesSent:
    return raw ? QVariant::fromValue<qulonglong>(function.bytes_sent)
               : QVariant(format_bytes(function.bytes_sent));
  case BytesReceived:
    return raw ? QVariant::fromValue<qulonglong>(function.bytes_recv)
               : QVariant(format_bytes(function.bytes_recv));
  case Time:
    return raw ? QVariant::fromValue<qlonglong>(function.time_total_ns)
               : QVariant(format_duration(function.time_total_ns));
  case Share:
    return raw ? QVariant(function.share_of_mpi_time)
               : QVariant(QStringLiteral("%1 %").arg(100.0 * function.share_of_mpi_time, 0, 'f', 1));
  default:
    return {};
  }
}

QVariant FunctionTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  static const QStringList kHeaders = {tr("Function"),       tr("Calls"), tr("Bytes sent"),
                                       tr("Bytes received"), tr("Time"),  tr("Share of MPI time")};
  return kHeaders.value(section);
}

} // namespace commlens::viewer
