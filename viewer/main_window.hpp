#pragma once
// The viewer's window: File menu (Open, a second run to compare, recent files, Quit), drag and drop of a
// database, one tab per view, and a status bar with the loading progress and a Cancel button. A database that
// cannot be read is reported in a dialog; whatever was open before stays open.
#include "database_loader.hpp"

#include <QMainWindow>

class QLabel;
class QMenu;
class QMessageBox;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace commlens::viewer {

class SummaryView;
class TimelineView;
class HistogramView;
class PartnerMatrixView;
class CopyPathsView;
class CompareView;
class StepsView;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  // Tab names, as --view takes them.
  static const QStringList& view_names();

  explicit MainWindow(QWidget* parent = nullptr);
  void open(const QString& path);
  bool show_view(const QString& name);

  DatabaseLoader& loader() { return loader_; }
  const std::shared_ptr<const LoadedDatabase>& database() const { return database_; }
  SummaryView* summary() const { return summary_; }
  TimelineView* timeline() const { return timeline_; }
  HistogramView* histograms() const { return histograms_; }
  PartnerMatrixView* matrix() const { return matrix_; }
  CopyPathsView* paths() const { return paths_; }
  CompareView* compare() const { return compare_; }
  StepsView* steps() const { return steps_; }
  // The reason shown in the last error dialog; empty when none was shown.
  QString last_error() const { return last_error_; }

protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  void build_menus();
  // Asks for a second database and opens it beside this one (compare tab, histograms).
  void choose_second_run();
  void show_loaded(std::shared_ptr<const LoadedDatabase> database);
  void report_failure(const QString& path, const QString& reason);
  void remember_recent(const QString& path);
  void rebuild_recent_menu();

  DatabaseLoader loader_;
  std::shared_ptr<const LoadedDatabase> database_;
  QTabWidget* tabs_;
  SummaryView* summary_;
  TimelineView* timeline_;
  HistogramView* histograms_;
  PartnerMatrixView* matrix_;
  CopyPathsView* paths_;
  CompareView* compare_;
  StepsView* steps_;
  QMenu* recent_menu_ = nullptr;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QLabel* status_;
  QMessageBox* error_dialog_ = nullptr;
  QString last_error_;
};

} // namespace commlens::viewer
