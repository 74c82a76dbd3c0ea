#include "compare_view.hpp"

#include "commlens/analysis/errors.hpp"

#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace commlens::viewer {
namespace {

ImplementationComparison compare_in(const std::filesystem::path& path, const std::string& runtime) {
  ImplementationComparison result;
  try {
    // Its own connection: the loaded one belongs to the UI thread.
    const analysis::Database database(path);
    result.implementations = analysis::traced_implementations(database);
    // The baseline and runtime that ran the same calls (an ab run: mpi:host_staged against
    // runtime:*), or the runtime asked for against that baseline.
    if (const auto pair = analysis::default_implementation_pair(database))
      result.comparison =
          analysis::compare_implementations(database, pair->first, runtime.empty() ? pair->second : runtime);
  } catch (const analysis::AnalysisError& error) {
    result.error = QString::fromStdString(error.what());
  }
  return result;
}

} // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent), loader_(this), model_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  status_ = new QLabel(tr("Open a second database to compare with."), this);
  status_->setWordWrap(true);
  auto* open = new QPushButton(tr("Open second database..."), this);
  runtime_choice_ = new QComboBox(this);
  runtime_choice_->setToolTip(tr("The runtime implementation compared with mpi"));
  runtime_choice_->hide();
  implementations_button_ = new QPushButton(tr("Compare implementations in this run"), this);
  implementations_button_->setEnabled(false);
  bar->addWidget(status_, 1);
  bar->addWidget(runtime_choice_);
  bar->addWidget(implementations_button_);
  bar->addWidget(open);
  layout->addLayout(bar);
  auto* table = new QTableView(this);
  table->setModel(&model_);
  table->verticalHeader()->hide();
  // Every column as wide as its header and cells: no function name or side's name is cut.
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table, 1);

  connect(open, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getOpenFileName(this, tr("Second commlens database"), {},
                                                   tr("commlens databases (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty())
      open_second(path);
  });
  connect(implementations_button_, &QPushButton::clicked, this, [this] {
    second_.reset(); // asked for explicitly: the implementations replace a second database
    compare_implementations(runtime_choice_->currentText());
  });
  connect(&implementations_watcher_, &QFutureWatcher<ImplementationComparison>::finished, this, [this] {
    if (implementations_watcher_.future().resultCount() > 0)
      show_implementations(implementations_watcher_.future().result());
  });
  connect(&loader_, &DatabaseLoader::progress, this, [this](int percent, const QString& step) {
    if (!loader_.busy())
      return; // a late progress signal must not cover the result
    status_->setText(tr("Loading B: %1 (%2 %)").arg(step).arg(percent));
  });
  connect(&loader_, &DatabaseLoader::loaded, this, [this](std::shared_ptr<const LoadedDatabase> database) {
    second_ = std::move(database);
    showing_implementations_ = false;
    refresh();
  });
  connect(&loader_, &DatabaseLoader::failed, this, [this](const QString& path, const QString& reason) {
    status_->setText(tr("Could not open B: %1").arg(reason.toHtmlEscaped()));
    emit failed(path, reason);
  });
}

CompareView::~CompareView() {
  implementations_watcher_.waitForFinished();
}

void CompareView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  implementations_watcher_.waitForFinished();
  first_ = std::move(database);
  second_.reset();
  implementations_requested_ = false;
  showing_implementations_ = false;
  implementations_button_->setEnabled(false);
  runtime_choice_->clear();
  runtime_choice_->hide();
  status_->setText(tr("Open a second database to compare with."));
  refresh();
  if (isVisible())
    compare_implementations();
}

void CompareView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (first_ && !implementations_requested_)
    compare_implementations();
}

void CompareView::open_second(const QString& path) {
  loader_.load(path);
}

void CompareView::compare_implementations(const QString& runtime) {
  if (!first_ || implementations_watcher_.isRunning())
    return;
  implementations_requested_ = true;
  showing_implementations_ = true;
  implementations_watcher_.setFuture(QtConcurrent::run(compare_in, first_->path, runtime.toStdString()));
}

void CompareView::wait_for_implementations() {
  if (first_ && !implementations_requested_)
    compare_implementations();
  implementations_watcher_.waitForFinished();
  QCoreApplication::processEvents(); // delivers the finished signal
}

void CompareView::show_implementations(const ImplementationComparison& result) {
  runtime_choice_->clear();
  for (const auto& implementation : result.implementations)
    if (implementation.starts_with("runtime:"))
      runtime_choice_->addItem(QString::fromStdString(implementation));
  runtime_choice_->setVisible(runtime_choice_->count() > 1);
  implementations_button_->setEnabled(result.comparison.has_value());
  if (!showing_implementations_ || second_)
    return; // a second database took over meanwhile
  if (!result.error.isEmpty()) {
    status_->setText(tr("Could not compare implementations: %1").arg(result.error.toHtmlEscaped()));
    return;
  }
  if (!result.comparison)
    return; // one implementation only: the tab waits for a second database
  const auto& comparison = *result.comparison;
  runtime_choice_->setCurrentText(QString::fromStdString(comparison.label_b));
  status_->setText(tr("Implementations in this run (COMMLENS_RUNTIME=ab): A = <b>%1</b> (the baseline), "
                      "B = <b>%2</b><br>ratio below 1: B is faster%3")
                       .arg(QString::fromStdString(comparison.label_a).toHtmlEscaped(),
                            QString::fromStdString(comparison.label_b).toHtmlEscaped(),
                            comparison.note.empty()
                                ? QString()
                                : QStringLiteral(" (%1)").arg(QString::fromStdString(comparison.note))));
  model_.compare(comparison);
}

QString CompareView::status() const {
  return status_->text();
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
