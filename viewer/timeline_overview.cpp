#include "timeline_overview.hpp"

#include "timeline_activity.hpp"
#include "timeline_canvas.hpp"

#include <QtConcurrent/QtConcurrentRun>

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace commlens::viewer {

TimelineOverview::TimelineOverview(TimelineCanvas* canvas, QWidget* parent)
    : QWidget(parent), canvas_(canvas) {
  setFixedHeight(kHeight);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
  setToolTip(tr("The whole run: the share of ranks inside MPI calls over time. Click or drag to move "
                "the timeline's window."));
  connect(canvas_, &TimelineCanvas::viewport_changed, this, qOverload<>(&QWidget::update));
  connect(&watcher_, &QFutureWatcher<std::vector<double>>::finished, this, [this] {
    if (watcher_.future().resultCount() > 0)
      activity_ = watcher_.future().result();
    update();
  });
}

TimelineOverview::~TimelineOverview() {
  watcher_.waitForFinished();
}

void TimelineOverview::set_database(std::shared_ptr<const LoadedDatabase> database) {
  watcher_.waitForFinished();
  watcher_.setFuture(QFuture<std::vector<double>>()); // the previous file's activity is not wanted
  database_ = std::move(database);
  activity_.clear();
  reading_due_ = !database_->timeline.lanes.empty();
  update();
  if (isVisible())
    start_reading();
}

void TimelineOverview::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  start_reading();
}

void TimelineOverview::start_reading() {
  if (!reading_due_)
    return;
  reading_due_ = false;
  // A connection of its own: the loaded one belongs to the UI thread.
  watcher_.setFuture(QtConcurrent::run([path = database_->path, extent = database_->timeline] {
    try {
      return query_mpi_activity(analysis::Database(path), extent, kSlices);
    } catch (const std::exception&) {
      return std::vector<double>{}; // the strip stays empty; the timeline reports database errors
    }
  }));
}

void TimelineOverview::wait_for_data() {
  start_reading();
  watcher_.waitForFinished();
  if (watcher_.future().isValid() && watcher_.future().resultCount() > 0)
    activity_ = watcher_.future().result();
}

// The strip lines up with the canvas' plot: the same gutter on the left, the whole extent across.
double TimelineOverview::x_of(std::int64_t time_ns) const {
  const auto& viewport = canvas_->viewport();
  const double span = static_cast<double>(viewport.extent_end_ns() - viewport.extent_start_ns());
  return TimelineCanvas::kGutterWidth + (width() - TimelineCanvas::kGutterWidth) *
                                            static_cast<double>(time_ns - viewport.extent_start_ns()) / span;
}

std::int64_t TimelineOverview::time_at(double x) const {
  const auto& viewport = canvas_->viewport();
  const double span = static_cast<double>(viewport.extent_end_ns() - viewport.extent_start_ns());
  const double share = std::clamp(
      (x - TimelineCanvas::kGutterWidth) / std::max(1, width() - TimelineCanvas::kGutterWidth), 0.0, 1.0);
  return viewport.extent_start_ns() + static_cast<std::int64_t>(share * span);
}

QRectF TimelineOverview::window_marker() const {
  const auto& viewport = canvas_->viewport();
  const double x0 = x_of(viewport.start_ns()), x1 = std::max(x_of(viewport.end_ns()), x0 + 2);
  return {x0, 1, x1 - x0, static_cast<double>(height() - 2)};
}

void TimelineOverview::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setPen(Qt::darkGray);
  painter.drawText(QRect(4, 0, TimelineCanvas::kGutterWidth - 6, height()), Qt::AlignVCenter,
                   tr("whole run"));
  if (!database_ || activity_.empty())
    return;
  const auto& activity = activity_;
  const auto start = database_->timeline.start_ns, end = database_->timeline.end_ns;
  const double slice = static_cast<double>(end - start) / static_cast<double>(activity.size());
  QPainterPath area;
  const double bottom = height() - 2;
  area.moveTo(x_of(start), bottom);
  for (std::size_t index = 0; index < activity.size(); ++index) {
    const double y = bottom - (height() - 4) * activity[index];
    area.lineTo(x_of(start + static_cast<std::int64_t>(slice * static_cast<double>(index))), y);
    area.lineTo(x_of(start + static_cast<std::int64_t>(slice * static_cast<double>(index + 1))), y);
  }
  area.lineTo(x_of(end), bottom);
  area.closeSubpath();
  painter.fillPath(area, QColor(110, 140, 190));
  const auto marker = window_marker();
  painter.fillRect(marker, QColor(255, 200, 0, 60));
  painter.setPen(QPen(QColor(200, 120, 0), 1.5));
  painter.drawRect(marker);
}

void TimelineOverview::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && database_)
    canvas_->centre_on(time_at(event->position().x()));
}

void TimelineOverview::mouseMoveEvent(QMouseEvent* event) {
  if ((event->buttons() & Qt::LeftButton) && database_)
    canvas_->centre_on(time_at(event->position().x()));
}

} // namespace commlens::viewer
