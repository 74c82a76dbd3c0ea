#include "compare_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace commlens::viewer {

CompareView::CompareView(QWidget* parent) : QWidget(parent), loader_(this), model_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  status_ = new QLabel(tr("Open a second database to compare with."), this);
  status_->setWordWrap(true);
  auto* open = new QPushButton(tr("Open second database..."), this);
  bar->addWidget(status_, 1);
  bar->addWidget(open);
  layout->addLayout(bar);
  auto* table = new QTableView(this);
  table->setModel(&model_);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table, 1);

  connect(open, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getOpenFileName(this, tr("Second commlens database"), {},
                                                   tr("commlens databases (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty())
      open_second(path);
  });
  connect(&loader_, &DatabaseLoader::progress, this, [this](int percent, const QString& step) {
    status_->setText(tr("Loading B: %1 (%2 %)").arg(step).arg(percent));
  });
  connect(&loader_, &DatabaseLoader::loaded, this, [this](std::shared_ptr<const LoadedDatabase> database) {
    second_ = std::move(database);
    refresh();
  });
  connect(&loader_, &DatabaseLoader::failed, this, [this](const QString& path, const QString& reason) {
    status_->setText(tr("Could not open B: %1").arg(reason.toHtmlEscaped()));
    emit failed(path, reason);
  });
}

void CompareView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  first_ = std::move(database);
  refresh();
}

void CompareView::open_second(const QString& path) {
  loader_.load(path);
}

void CompareView::refresh() {
  if (!first_ || !second_) {
    model_.compare(first_ ? first_->report.functions : std::vector<analysis::FunctionStats>{}, {});
    return;
  }
  status_->setText(tr("A: %1<br>B: %2<br>ratio below 1: B is faster")
                       .arg(QString::fromStdString(first_->path.string()).toHtmlEscaped(),
                            QString::fromStdString(second_->path.string()).toHtmlEscaped()));
  model_.compare(first_->report.functions, second_->report.functions);
}

} // namespace commlens::viewer
