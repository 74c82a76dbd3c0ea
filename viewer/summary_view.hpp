#pragma once
// Summary: a headline (mode, which collectors ran, ranks, calls, time in communication with MPI and
// NCCL apart and their set-up apart, dropped events), the findings (what is wrong, most costly
// first, each unfolding into its evidence, where to look and what to try), then pictures: time in
// MPI and NCCL calls per rank split by function, the functions with the most time and, for runs
// with CUDA copies, the bytes per copy path; the tables (ranks, functions, the run table) below.
#include "bar_chart.hpp"
#include "function_table_model.hpp"
#include "loaded_database.hpp"
#include "rank_table_model.hpp"

#include <QFutureWatcher>
#include <QWidget>

class QLabel;
class QTableView;
class QTableWidget;
class QTreeWidget;

namespace commlens::viewer {

// A run's findings, or why they could not be found.
struct FoundFindings {
  analysis::FindingsSection section;
  QString error;
};

class SummaryView : public QWidget {
  Q_OBJECT
public:
  explicit SummaryView(QWidget* parent = nullptr);
  ~SummaryView() override;
  // Shows the run at once and its findings when a pool thread has found them (the wait states read
  // the whole trace: seconds at 10 M calls). The search starts when the Summary is first shown, so
  // a run opened on another view, or closed before, does not wait for it.
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // Blocks until the findings are shown; for screenshots and tests.
  void wait_for_findings();

  const FunctionTableModel& functions() const { return functions_; }
  const RankTableModel& ranks() const { return ranks_; }
  QString headline() const;
  // The collectors that ran, as the headline states them.
  const QString& collectors() const { return collectors_; }
  const BarChart& rank_chart() const { return *rank_chart_; }
  const BarChart& function_chart() const { return *function_chart_; }
  const BarChart& copy_chart() const { return *copy_chart_; }
  const QTableView& rank_table() const { return *rank_table_; }
  // One top-level item per finding (title, cost, id), its details as children; one line when none.
  // Double-clicking a finding with a place in the trace, or one of its lines, shows it there.
  const QTreeWidget& findings() const { return *findings_; }

signals:
  void timeline_place_chosen(const analysis::TimelinePlace& place);

protected:
  void showEvent(QShowEvent* event) override;

private:
  void start_finding();
  void show_findings(const FoundFindings& found);

  QLabel* headline_;
  QTreeWidget* findings_;
  std::vector<analysis::TimelinePlace> places_; // the findings' places, by an item's kPlaceRole
  QTableView* rank_table_;
  QTableWidget* run_table_;
  BarChart* rank_chart_;
  BarChart* function_chart_;
  BarChart* copy_chart_;
  FunctionTableModel functions_;
  RankTableModel ranks_;
  QString collectors_;
  QFutureWatcher<FoundFindings> findings_watcher_;
  std::shared_ptr<const LoadedDatabase> unsearched_; // a run whose findings are not looked for yet
};

} // namespace commlens::viewer
