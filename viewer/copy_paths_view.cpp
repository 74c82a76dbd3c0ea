#include "copy_paths_view.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace commlens::viewer {

CopyPathsView::CopyPathsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  layout->addWidget(status_);
  table_ = new QTableWidget(this);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addWidget(table_, 1);
}

void CopyPathsView::set_database(const std::shared_ptr<const LoadedDatabase>& database) {
  const auto& section = database->report.cuda_copies;
  table_->clear();
  table_->setRowCount(0);
  if (!section.absent.empty() || section.rows.empty()) {
    status_->setText(tr("<b>No CUDA data</b>: %1")
                         .arg(section.absent.empty()
                                  ? tr("the run recorded no CUDA copies")
                                  : QString::fromStdString(section.absent).toHtmlEscaped()));
    table_->setColumnCount(0);
    table_->hide();
    return;
  }
  status_->setText(tr("CUDA copies per path, rank and GPU"));
  table_->show();
  table_->setColumnCount(static_cast<int>(section.headers.size()));
  QStringList headers;
  for (const auto& header : section.headers)
    headers << QString::fromStdString(header);
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(section.rows.size()));
  for (int row = 0; const auto& cells : section.rows) {
    for (int column = 0; const auto& cell : cells)
      table_->setItem(row, column++, new QTableWidgetItem(QString::fromStdString(cell)));
    ++row;
  }
}

QString CopyPathsView::status() const {
  return status_->text();
}

int CopyPathsView::rows() const {
  return table_->rowCount();
}

} // namespace commlens::viewer
