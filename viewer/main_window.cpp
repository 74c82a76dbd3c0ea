#include "main_window.hpp"

#include "compare_view.hpp"
#include "copy_paths_view.hpp"
#include "histogram_view.hpp"
#include "partner_matrix_view.hpp"
#include "steps_view.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace commlens::viewer {
namespace {

constexpr int kRecentFilesKept = 8;
const QString kRecentFilesKey = QStringLiteral("recentFiles");

} // namespace

const QStringList& MainWindow::view_names() {
  static const QStringList kNames = {QStringLiteral("summary"),    QStringLiteral("timeline"),
                                     QStringLiteral("histograms"), QStringLiteral("matrix"),
                                     QStringLiteral("paths"),      QStringLiteral("steps"),
                                     QStringLiteral("compare")};
  return kNames;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), loader_(this) {
  setWindowTitle(tr("commlens viewer"));
  setAcceptDrops(true);
  tabs_ = new QTabWidget(this);
  summary_ = new SummaryView(tabs_);
  timeline_ = new TimelineView(tabs_);
  histograms_ = new HistogramView(tabs_);
  matrix_ = new PartnerMatrixView(tabs_);
  paths_ = new CopyPathsView(tabs_);
  steps_ = new StepsView(tabs_);
  compare_ = new CompareView(tabs_);
  tabs_->addTab(summary_, tr("Summary"));
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(histograms_, tr("Histograms"));
  tabs_->addTab(matrix_, tr("Partner matrix"));
  tabs_->addTab(paths_, tr("Copy paths"));
  tabs_->addTab(steps_, tr("Steps"));
  tabs_->addTab(compare_, tr("Compare"));
  setCentralWidget(tabs_);

  status_ = new QLabel(tr("Ready"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  progress_->hide();
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->hide();
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  build_menus();

  connect(cancel_, &QPushButton::clicked, &loader_, &DatabaseLoader::cancel);
  connect(&loader_, &DatabaseLoader::progress, this, [this](int percent, const QString& step) {
    progress_->setValue(percent);
    status_->setText(tr("Loading: %1").arg(step));
  });
  connect(&loader_, &DatabaseLoader::loaded, this, &MainWindow::show_loaded);
  connect(&loader_, &DatabaseLoader::failed, this, &MainWindow::report_failure);
  connect(&loader_, &DatabaseLoader::cancelled, this, [this](const QString& path) {
    progress_->hide();
    cancel_->hide();
    status_->setText(tr("Loading %1 cancelled").arg(path));
  });
  connect(compare_, &CompareView::failed, this, &MainWindow::report_failure);
  // One second run for both views that compare: the compare tab's, overlaid on the histograms.
  connect(&compare_->loader(), &DatabaseLoader::loaded, histograms_, &HistogramView::set_second_database);
  connect(histograms_, &HistogramView::second_run_requested, this, &MainWindow::choose_second_run);
  connect(summary_, &SummaryView::timeline_place_chosen, this, [this](const analysis::TimelinePlace& place) {
    show_view(QStringLiteral("timeline"));
    timeline_->show_place(place);
  });
  connect(paths_, &CopyPathsView::copies_chosen, this, [this](const CopySelection& selection) {
    show_view(QStringLiteral("timeline"));
    timeline_->canvas()->select_copies(selection);
  });
  connect(timeline_->canvas(), &TimelineCanvas::selection_changed, this, [this](const QString&) {
    status_->setText(tr("Selected a call; its details are below the timeline"));
  });
  resize(1280, 800);
}

void MainWindow::build_menus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    const auto path = QFileDialog::getOpenFileName(this, tr("Open commlens database"), {},
                                                   tr("commlens databases (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty())
      open(path);
  });
  file->addAction(tr("Open a second run to &compare..."), this, &MainWindow::choose_second_run);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  rebuild_recent_menu();
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::choose_second_run() {
  const auto path = QFileDialog::getOpenFileName(this, tr("Open a second run to compare"), {},
                                                 tr("commlens databases (*.sqlite *.db);;All files (*)"));
  if (!path.isEmpty())
    compare_->open_second(path);
}

void MainWindow::open(const QString& path) {
  progress_->setValue(0);
  progress_->show();
  cancel_->show();
  status_->setText(tr("Loading %1").arg(path));
  loader_.load(path);
}

bool MainWindow::show_view(const QString& name) {
  const auto index = view_names().indexOf(name);
  if (index >= 0)
    tabs_->setCurrentIndex(static_cast<int>(index));
  return index >= 0;
}

void MainWindow::show_loaded(std::shared_ptr<const LoadedDatabase> database) {
  database_ = database;
  progress_->hide();
  cancel_->hide();
  summary_->set_database(database);
  timeline_->set_database(database);
  histograms_->set_database(database);
  matrix_->set_database(database);
  paths_->set_database(database);
  steps_->set_database(database);
  compare_->set_database(database);
  const auto path = QString::fromStdString(database->path.string());
  setWindowTitle(tr("%1 - commlens viewer").arg(QFileInfo(path).fileName()));
  status_->setText(tr("%1: %2 traced calls on %3 lanes")
                       .arg(path)
                       .arg(database->timeline.calls)
                       .arg(database->timeline.lanes.size()));
  remember_recent(path);
}

void MainWindow::report_failure(const QString& path, const QString& reason) {
  progress_->hide();
  cancel_->hide();
  last_error_ = reason;
  status_->setText(tr("Could not open %1").arg(path));
  // Window-modal and opened without exec(), so the window keeps working (and tests keep running).
  if (!error_dialog_)
    error_dialog_ =
        new QMessageBox(QMessageBox::Warning, tr("Cannot open database"), {}, QMessageBox::Ok, this);
  error_dialog_->setText(tr("This file cannot be shown."));
  error_dialog_->setInformativeText(reason);
  error_dialog_->open();
}

void MainWindow::remember_recent(const QString& path) {
  QSettings settings;
  auto files = settings.value(kRecentFilesKey).toStringList();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kRecentFilesKept)
    files.removeLast();
  settings.setValue(kRecentFilesKey, files);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const auto files = QSettings().value(kRecentFilesKey).toStringList();
  for (const auto& file : files)
    recent_menu_->addAction(file, this, [this, file] { open(file); });
  recent_menu_->setEnabled(!files.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  open(event->mimeData()->urls().first().toLocalFile());
  event->acceptProposedAction();
}

} // namespace commlens::viewer
