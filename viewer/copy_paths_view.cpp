#include "copy_paths_view.hpp"

#include "format.hpp"
#include "palette.hpp"
#include "timeline_streams.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <array>
#include <map>

namespace commlens::viewer {
namespace {

QString bandwidth_text(std::optional<double> gb_per_s) {
  return gb_per_s ? format_rate(*gb_per_s) : QStringLiteral("-");
}

QString direction_cell(const analysis::CopyRoute& route) {
  return QString::fromStdString(route.direction);
}

} // namespace

CopyPathsView::CopyPathsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::RichText);
  layout->addWidget(status_);
  auto* charts = new QSplitter(Qt::Horizontal);
  bandwidth_ = new BarChart(charts);
  over_time_ = new SeriesChart(charts);
  charts->addWidget(bandwidth_);
  charts->addWidget(over_time_);
  table_ = new QTableWidget(this);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setToolTip(tr("Click a row to see its copies in the timeline."));
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) { choose_row(row); });
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(charts);
  splitter->addWidget(table_);
  content_ = splitter;
  layout->addWidget(splitter, 1);
}

void CopyPathsView::set_database(const std::shared_ptr<const LoadedDatabase>& database) {
  const auto& usage = database->copy_paths;
  table_->clear();
  table_->setRowCount(0);
  row_selections_.clear();
  if (usage.empty()) {
    const auto& absent = database->report.cuda_copies.absent;
    status_->setText(tr("<b>No CUDA data</b>: %1")
                         .arg(absent.empty() ? tr("the run recorded no CUDA copies")
                                             : absence_text(absent).toHtmlEscaped()));
    content_->hide();
    return;
  }
  content_->show();
  const auto start = database->timeline.start_ns, end = database->timeline.end_ns;
  const auto slice_ns = std::max<std::int64_t>(1, (end - start + kTimeSlices - 1) / kTimeSlices);
  // Two rates, each named for what it divides: a row's bytes by its copies' own time (how fast the
  // path runs), and a slice's bytes by the slice (how much it carried over the run).
  status_->setText(tr("CUDA copies per route (path, direction, host memory), rank and GPU. <b>Bandwidth "
                      "while copying</b>: a row's bytes over its copies' own summed durations. "
                      "<b>Throughput over the run</b>: the bytes a route moved in each %1 slice, over "
                      "the slice.")
                       .arg(format_duration(slice_ns)));
  const QStringList headers = {tr("Path"),  tr("Direction"), tr("Host memory"),
                               tr("Rank"),  tr("GPU"),       tr("Copies"),
                               tr("Bytes"), tr("Busy time"), tr("Bandwidth while copying")};
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(usage.size()));
  std::vector<Bar> bars;
  for (int row = 0; const auto& entry : usage) {
    const auto& route = entry.route;
    const auto path =
        QString::fromStdString(route.path) +
        (route.link ? QStringLiteral(" (%1)").arg(QString::fromStdString(*route.link)) : QString());
    const QStringList cells = {path,
                               direction_cell(route),
                               route.host_memory.empty() ? QStringLiteral("-")
                                                         : QString::fromStdString(route.host_memory),
                               QString::number(entry.rank),
                               QString::number(entry.device),
                               format_count(entry.copies),
                               format_bytes(entry.bytes),
                               format_duration(entry.busy_ns),
                               bandwidth_text(entry.gb_per_s())};
    for (int column = 0; column < cells.size(); ++column) {
      auto* item = new QTableWidgetItem(cells[column]);
      item->setTextAlignment(column < 3 ? Qt::AlignLeft | Qt::AlignVCenter
                                        : Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, column, item);
    }
    const auto label =
        tr("%1 \u00b7 rank %2, GPU %3").arg(route_short_text(route)).arg(entry.rank).arg(entry.device);
    bars.push_back({label, {{route_text(route), entry.gb_per_s().value_or(0), copy_path_color(route.path)}}});
    row_selections_.push_back({route, entry.rank, entry.device});
    ++row;
  }
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  bandwidth_->set_bars(tr("Bandwidth while copying (bytes over the copies' own time)"), std::move(bars),
                       ValueUnit::GigabytesPerSecond);

  // Throughput over time: the bytes each route moved in a slice over the slice's width (GB/s = bytes/ns).
  std::vector<Series> series;
  std::map<std::string, int> routes_of_path; // routes of one path share its colour, not its line style
  constexpr std::array kStyles = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
  for (auto& route : analysis::query_copy_path_series(*database->database, start, end, kTimeSlices)) {
    const auto style = kStyles[static_cast<std::size_t>(routes_of_path[route.route.path]++) % kStyles.size()];
    Series line{route_short_text(route.route), copy_path_color(route.route.path), {}, style};
    for (const auto bytes : route.bytes_per_bin)
      line.values.push_back(static_cast<double>(bytes) / static_cast<double>(slice_ns));
    series.push_back(std::move(line));
  }
  over_time_->set_series(tr("Throughput over the run (bytes moved per %1)").arg(format_duration(slice_ns)),
                         std::move(series), end - start, ValueUnit::GigabytesPerSecond,
                         tr("No copies inside the traced span."));
}

void CopyPathsView::choose_row(int row) {
  if (row >= 0 && row < static_cast<int>(row_selections_.size()))
    emit copies_chosen(row_selections_[static_cast<std::size_t>(row)]);
}

QString CopyPathsView::status() const {
  return status_->text();
}

int CopyPathsView::rows() const {
  return table_->rowCount();
}

QString CopyPathsView::cell(int row, int column) const {
  const auto* item = table_->item(row, column);
  return item ? item->text() : QString();
}

} // namespace commlens::viewer
