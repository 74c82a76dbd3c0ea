#include "copy_paths_view.hpp"

#include "format.hpp"
#include "timeline_annotations.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace commlens::viewer {
namespace {

QString path_text(const analysis::CopyPathUsage& usage) {
  const auto path = QString::fromStdString(usage.path);
  return usage.link ? QStringLiteral("%1 (%2)").arg(path, QString::fromStdString(*usage.link)) : path;
}

QString bandwidth_text(std::optional<double> gb_per_s) {
  return gb_per_s ? format_value(*gb_per_s, ValueUnit::GigabytesPerSecond) : QStringLiteral("-");
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
  status_->setText(tr("CUDA copies per path, rank and GPU; bandwidth is bytes over the copies' summed "
                      "durations"));
  const QStringList headers = {tr("Path"),  tr("Rank"),      tr("GPU"),      tr("Copies"),
                               tr("Bytes"), tr("Busy time"), tr("Bandwidth")};
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(usage.size()));
  std::vector<Bar> bars;
  for (int row = 0; const auto& entry : usage) {
    const QStringList cells = {path_text(entry),
                               QString::number(entry.rank),
                               QString::number(entry.device),
                               format_count(entry.copies),
                               format_bytes(entry.bytes),
                               format_duration(entry.busy_ns),
                               bandwidth_text(entry.gb_per_s())};
    for (int column = 0; column < cells.size(); ++column) {
      auto* item = new QTableWidgetItem(cells[column]);
      item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter
                                         : Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, column, item);
    }
    const auto label = tr("%1, rank %2, GPU %3").arg(path_text(entry)).arg(entry.rank).arg(entry.device);
    bars.push_back({label, {{path_text(entry), entry.gb_per_s().value_or(0), copy_path_color(entry.path)}}});
    row_selections_.push_back({entry.path, entry.link, entry.rank, entry.device});
    ++row;
  }
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  bandwidth_->set_bars(tr("Bandwidth per path, rank and GPU"), std::move(bars),
                       ValueUnit::GigabytesPerSecond);

  // Bandwidth over time: bytes each path moved in a slice over the slice's width (GB/s = bytes/ns).
  const auto start = database->timeline.start_ns, end = database->timeline.end_ns;
  const double slice_ns =
      static_cast<double>(std::max<std::int64_t>(1, (end - start + kTimeSlices - 1) / kTimeSlices));
  std::vector<Series> series;
  for (auto& path : analysis::query_copy_path_series(*database->database, start, end, kTimeSlices)) {
    Series line{QString::fromStdString(path.path), copy_path_color(path.path), {}};
    for (const auto bytes : path.bytes_per_bin)
      line.values.push_back(static_cast<double>(bytes) / slice_ns);
    series.push_back(std::move(line));
  }
  over_time_->set_series(tr("Bandwidth per path over the run"), std::move(series), end - start,
                         ValueUnit::GigabytesPerSecond, tr("No copies inside the traced span."));
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
