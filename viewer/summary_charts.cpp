#include "summary_charts.hpp"

#include "palette.hpp"

#include <QCoreApplication>

#include <algorithm>
#include <map>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("SummaryCharts", text);
}

} // namespace

QStringList busiest_function_names(const LoadedDatabase& database, int kept) {
  // report.functions is most time first over the run.
  QStringList named;
  for (const auto& function : database.report.functions)
    if (named.size() < kept && function.time_total_ns > 0)
      named << QString::fromStdString(function.name);
  return named;
}

Bar function_split_bar(QString label, const std::vector<analysis::GroupFunctionTime>& times, int group,
                       const QStringList& named, double divisor) {
  Bar bar{std::move(label), {}};
  double other = 0;
  std::map<qsizetype, double> by_name; // index in `named` -> time, so every bar has one order
  for (const auto& entry : times) {
    if (entry.group != group)
      continue;
    const auto index = named.indexOf(QString::fromStdString(entry.function));
    (index >= 0 ? by_name[index] : other) += static_cast<double>(entry.time_ns) / divisor;
  }
  for (const auto& [index, time] : by_name)
    bar.segments.push_back({named[index], time, chart_color(index)});
  if (other > 0)
    bar.segments.push_back({tr("other MPI"), other, QColor(190, 190, 190)});
  return bar;
}

std::vector<Bar> rank_time_bars(const LoadedDatabase& database, int kept) {
  const auto named = busiest_function_names(database, kept);
  std::vector<Bar> bars;
  for (const auto& rank : database.report.ranks)
    bars.push_back(function_split_bar(tr("rank %1").arg(rank.rank), database.rank_function_times, rank.rank,
                                      named, 1.0));
  return bars;
}

std::vector<Bar> top_function_bars(const LoadedDatabase& database, int shown) {
  // The same colours as the per-rank bars: both follow the order of report.functions.
  std::vector<Bar> bars;
  for (const auto& function : database.report.functions) {
    if (static_cast<int>(bars.size()) == shown)
      break;
    const auto name = QString::fromStdString(function.name);
    bars.push_back(
        {name, {{name, static_cast<double>(function.time_total_ns), chart_color(qsizetype(bars.size()))}}});
  }
  return bars;
}

std::vector<Bar> copy_path_bars(const LoadedDatabase& database) {
  std::map<std::string, double> bytes_per_path;
  for (const auto& usage : database.copy_paths)
    bytes_per_path[usage.route.path] += static_cast<double>(usage.bytes);
  std::vector<Bar> bars;
  for (const auto& [path, bytes] : bytes_per_path) {
    const auto name = QString::fromStdString(path);
    bars.push_back({name, {{name, bytes, copy_path_color(path)}}});
  }
  std::sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.total() > b.total(); });
  return bars;
}

} // namespace commlens::viewer
