#pragma once
// Copy paths tab: CUDA copies per route (path and link, direction, pageable or pinned host memory),
// rank and GPU: a table with sizes, busy time and the bandwidth while copying (bytes over the
// copies' own time), bars of that bandwidth for the same rows, and each route's throughput over the
// run (bytes moved per slice, over the slice). "No CUDA data" when the run recorded no copies.
// Clicking a row shows its copies in the timeline.
#include "bar_chart.hpp"
#include "loaded_database.hpp"
#include "series_chart.hpp"
#include "timeline_streams.hpp"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace commlens::viewer {

class CopyPathsView : public QWidget {
  Q_OBJECT
public:
  // Slices of the run the bandwidth-over-time chart averages over.
  static constexpr int kTimeSlices = 60;

  explicit CopyPathsView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  QString status() const;
  int rows() const;
  // The text of a table cell, as shown.
  QString cell(int row, int column) const;
  const BarChart& bandwidth_chart() const { return *bandwidth_; }
  const SeriesChart& over_time_chart() const { return *over_time_; }
  // Clicks table row `row`: asks for its copies in the timeline.
  void choose_row(int row);

signals:
  void copies_chosen(const commlens::viewer::CopySelection& selection);

private:
  QLabel* status_;
  QTableWidget* table_;
  BarChart* bandwidth_;
  SeriesChart* over_time_;
  QWidget* content_;
  std::vector<CopySelection> row_selections_;
};

} // namespace commlens::viewer
