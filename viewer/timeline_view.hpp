#pragma once
// Timeline tab: an overview strip of the whole run, a legend of the colours in use, the canvas (in a
// scroll area when its rows need more height than the window has), a function search ("find next
// call of MPI_X", which also greys out every other function) and a panel with the selected call's
// details.
#include "timeline_canvas.hpp"
#include "timeline_legend.hpp"
#include "timeline_overview.hpp"

#include <QWidget>

class QLabel;
class QLineEdit;
class QScrollArea;

namespace commlens::viewer {

class TimelineView : public QWidget {
  Q_OBJECT
public:
  explicit TimelineView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  TimelineCanvas* canvas() const { return canvas_; }
  TimelineOverview* overview() const { return overview_; }
  TimelineLegend* legend() const { return legend_; }
  QScrollArea* scroll_area() const { return scroll_; }
  // Highlights `function_name` and selects its next call after the selection (or the view's start);
  // false when the name is unknown or there is no later call.
  bool find_next(const QString& function_name);
  // Shows a finding's evidence: its span with a fifth of it either side (the whole run when it has
  // none), its function's calls highlighted and its first rank scrolled to the top of the rows.
  void show_place(const analysis::TimelinePlace& place);

private:
  // The id of the function named `name` (any case) in the open database.
  std::optional<int> function_id(const QString& name) const;
  void scroll_to_rank(int rank);

  std::shared_ptr<const LoadedDatabase> database_;
  TimelineCanvas* canvas_;
  TimelineOverview* overview_;
  TimelineLegend* legend_;
  QScrollArea* scroll_;
  QLineEdit* search_;
  QLabel* details_;
};

} // namespace commlens::viewer
