#pragma once
// The strip above the timeline: the whole run's MPI activity (share of lanes inside MPI calls over
// time) with the window the timeline shows marked on it. Clicking or dragging on it moves the
// timeline's window there, keeping the zoom.
#include "loaded_database.hpp"

#include <QWidget>

namespace commlens::viewer {

class TimelineCanvas;

class TimelineOverview : public QWidget {
  Q_OBJECT
public:
  static constexpr int kHeight = 34;

  TimelineOverview(TimelineCanvas* canvas, QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  // Where the timeline's visible window is marked, in this widget's pixels.
  QRectF window_marker() const;
  // The time a click at `x` centres the timeline on.
  std::int64_t time_at(double x) const;

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  double x_of(std::int64_t time_ns) const;

  TimelineCanvas* canvas_;
  std::shared_ptr<const LoadedDatabase> database_;
};

} // namespace commlens::viewer
