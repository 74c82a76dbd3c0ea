#pragma once
// The strip above the timeline: the whole run's MPI activity (share of lanes inside MPI calls over
// time) with the window the timeline shows marked on it. Clicking or dragging on it moves the
// timeline's window there, keeping the zoom. The activity is read on a pool thread with its own
// connection when the strip is first shown, so opening a file never waits for it.
#include "loaded_database.hpp"

#include <QFutureWatcher>
#include <QWidget>

namespace commlens::viewer {

class TimelineCanvas;

class TimelineOverview : public QWidget {
  Q_OBJECT
public:
  static constexpr int kHeight = 34;
  // Slices of the activity: about one per pixel of a full-screen window.
  static constexpr int kSlices = 1200;

  TimelineOverview(TimelineCanvas* canvas, QWidget* parent = nullptr);
  ~TimelineOverview() override;
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // Blocks until the activity is read; for screenshots and tests.
  void wait_for_data();
  // Share of lanes inside MPI calls in each of kSlices slices of the traced span; empty until read.
  const std::vector<double>& activity() const { return activity_; }
  // Where the timeline's visible window is marked, in this widget's pixels.
  QRectF window_marker() const;
  // The time a click at `x` centres the timeline on.
  std::int64_t time_at(double x) const;

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void showEvent(QShowEvent* event) override;

private:
  void start_reading();
  double x_of(std::int64_t time_ns) const;

  TimelineCanvas* canvas_;
  std::shared_ptr<const LoadedDatabase> database_;
  QFutureWatcher<std::vector<double>> watcher_;
  std::vector<double> activity_;
  bool reading_due_ = false; // a database is set whose activity was not asked for yet
};

} // namespace commlens::viewer
