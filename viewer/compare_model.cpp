#include "compare_model.hpp"

#include "format.hpp"

#include "commlens/analysis/size_bin.hpp"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <map>

namespace commlens::viewer {
namespace {

std::optional<double> mean(std::int64_t time_ns, std::uint64_t calls) {
  if (calls == 0)
    return std::nullopt;
  return static_cast<double>(time_ns) / static_cast<double>(calls);
}

} // namespace

std::optional<double> CompareRow::mean_time_ratio() const {
  const auto mean_a = mean(time_a_ns, calls_a), mean_b = mean(time_b_ns, calls_b);
  if (!mean_a || !mean_b || *mean_a <= 0)
    return std::nullopt;
  return *mean_b / *mean_a;
}

void CompareModel::compare(const std::vector<analysis::FunctionStats>& a,
                           const std::vector<analysis::FunctionStats>& b) {
  beginResetModel();
  rows_.clear();
  label_a_ = QStringLiteral("A");
  label_b_ = QStringLiteral("B");
  has_medians_ = false;
  // Functions are matched by name: ids differ between MPI libraries. A's order (most time first)
  // leads; functions only B called follow.
  std::map<std::string, const analysis::FunctionStats*> by_name_b;
  for (const auto& function : b)
    by_name_b[function.name] = &function;
  std::vector<std::pair<const analysis::FunctionStats*, const analysis::FunctionStats*>> pairs;
  for (const auto& function : a) {
    const auto found = by_name_b.find(function.name);
    pairs.emplace_back(&function, found == by_name_b.end() ? nullptr : found->second);
    if (found != by_name_b.end())
      by_name_b.erase(found);
  }
  for (const auto& function : b)
    if (by_name_b.contains(function.name))
      pairs.emplace_back(nullptr, &function);

  for (const auto& [in_a, in_b] : pairs) {
    const auto name = QString::fromStdString(in_a ? in_a->name : in_b->name);
    rows_.push_back({name,
                     {},
                     in_a ? in_a->calls : 0,
                     in_b ? in_b->calls : 0,
                     in_a ? in_a->time_total_ns : 0,
                     in_b ? in_b->time_total_ns : 0,
                     std::nullopt});
    std::map<int, CompareRow> sizes;
    for (const auto* side : {in_a, in_b}) {
      if (!side)
        continue;
      for (const auto& bin : side->size_histogram) {
        auto& row = sizes[bin.size_bin];
        row.function = name;
        row.size = QString::fromStdString(bin.label);
        (side == in_a ? row.calls_a : row.calls_b) += bin.calls;
        (side == in_a ? row.time_a_ns : row.time_b_ns) += bin.time_total_ns;
      }
    }
    for (auto& [bin, row] : sizes)
      rows_.push_back(std::move(row));
  }
  endResetModel();
}

void CompareModel::compare(const analysis::Comparison& comparison) {
  beginResetModel();
  rows_.clear();
  label_a_ = QString::fromStdString(comparison.label_a);
  label_b_ = QString::fromStdString(comparison.label_b);
  has_medians_ = comparison.per_call_times;
  // Bins come by function, then size: a function's total row sums its bins and goes before them.
  std::size_t total_row = 0;
  for (const auto& bin : comparison.bins) {
    const auto function = QString::fromStdString(bin.function);
    if (rows_.empty() || rows_[total_row].function != function) {
      total_row = rows_.size();
      rows_.push_back({function, {}, 0, 0, 0, 0, std::nullopt});
    }
    auto& total = rows_[total_row];
    total.calls_a += bin.a.calls;
    total.calls_b += bin.b.calls;
    total.time_a_ns += bin.a.time_total_ns;
    total.time_b_ns += bin.b.time_total_ns;
    rows_.push_back({function, QString::fromStdString(analysis::size_bin_label(bin.size_bin)), bin.a.calls,
                     bin.b.calls, bin.a.time_total_ns, bin.b.time_total_ns,
                     comparison.per_call_times ? bin.median_ratio : std::nullopt});
  }
  endResetModel();
}

const CompareRow* CompareModel::size_row(const QString& function, const QString& size) const {
  for (const auto& row : rows_)
    if (row.function == function && row.size == size)
      return &row;
  return nullptr;
}

const CompareRow* CompareModel::function_row(const QString& function) const {
  for (const auto& row : rows_)
    if (row.function == function && row.size.isEmpty())
      return &row;
  return nullptr;
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : has_medians_ ? ColumnCount : MedianRatio;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid())
    return {};
  const auto& row = rows_[static_cast<std::size_t>(index.row())];
  const auto ratio = row.mean_time_ratio();
  if (role == Qt::BackgroundRole && index.column() == Ratio && ratio)
    return QBrush(*ratio > 1.1   ? QColor(255, 215, 215)
                  : *ratio < 0.9 ? QColor(215, 245, 215)
                                 : QColor(Qt::white));
  if (role == Qt::FontRole && row.size.isEmpty()) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole)
    return {};
  const auto mean_text = [](std::int64_t time, std::uint64_t calls) {
    const auto value = mean(time, calls);
    return value ? format_duration(static_cast<std::int64_t>(*value)) : QStringLiteral("-");
  };
  switch (index.column()) {
  case Function:
    return row.size.isEmpty() ? row.function : QString();
  case Size:
    return row.size.isEmpty() ? tr("all sizes") : row.size;
  case CallsA:
    return format_count(row.calls_a);
  case CallsB:
    return format_count(row.calls_b);
  case MeanA:
    return mean_text(row.time_a_ns, row.calls_a);
  case MeanB:
    return mean_text(row.time_b_ns, row.calls_b);
  case Ratio:
    return ratio ? QStringLiteral("%1x").arg(*ratio, 0, 'f', 2) : QStringLiteral("-");
  case MedianRatio:
    return row.median_ratio ? QStringLiteral("%1x").arg(*row.median_ratio, 0, 'f', 2) : QStringLiteral("-");
  default:
    return {};
  }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
    return {};
  // Short headers: the sides' names (a path, or mpi:host_staged) are in the view's status line and
  // in each header's tooltip, so no header is cut.
  if (role == Qt::ToolTipRole)
    return label_a_ == QLatin1String("A") ? QVariant()
                                          : QVariant(tr("A = %1, B = %2").arg(label_a_, label_b_));
  switch (section) {
  case Function:
    return tr("Function");
  case Size:
    return tr("Size");
  case CallsA:
    return tr("Calls A");
  case CallsB:
    return tr("Calls B");
  case MeanA:
    return tr("Mean time A");
  case MeanB:
    return tr("Mean time B");
  case Ratio:
    return tr("Mean B / A");
  case MedianRatio:
    return tr("Median B / A");
  default:
    return {};
  }
}

} // namespace commlens::viewer
