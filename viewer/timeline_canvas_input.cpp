// The timeline canvas' input: keys (W/S zoom, A/D pan, as in Perfetto), the wheel (zoom; with Ctrl,
// a rank's share of the height), dragging (pans, or on a rank's lower edge resizes its lanes),
// clicks (select a call; on a rank's name fold or unfold it; on the set-up chip show the set-up),
// double-clicks (on a phase in the band: show all of it) and hover tooltips. Kept apart from
// the painting in timeline_canvas.cpp.
#include "timeline_canvas.hpp"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

namespace commlens::viewer {
namespace {

constexpr double kWheelZoomPerNotch = 1.25;
constexpr int kDragThresholdPixels = 3;
constexpr double kKeyZoomFactor = 1.5;
constexpr double kKeyPanShare = 0.2; // of the visible width per key press
constexpr int kResizeGrabPixels = 3; // how near a rank's lower edge a drag resizes it

} // namespace

std::optional<int> TimelineCanvas::resize_handle_at(QPoint position) const {
  if (!database_)
    return std::nullopt;
  // A rank's edge is the bottom of its last call lane (its copy and kernel rows keep their height).
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const auto& current = rows_[row];
    const bool last_lane = current.kind == TimelineRowKind::Calls &&
                           (row + 1 == rows_.size() || rows_[row + 1].kind != TimelineRowKind::Calls ||
                            rows_[row + 1].rank != current.rank);
    if (last_lane && !collapsed(current.rank) &&
        std::abs(position.y() - row_rect(row).bottom()) <= kResizeGrabPixels)
      return current.rank;
  }
  return std::nullopt;
}

void TimelineCanvas::keyPressEvent(QKeyEvent* event) {
  const double middle = kGutterWidth + viewport_.width() / 2.0;
  switch (event->key()) {
  case Qt::Key_W:
    zoom(kKeyZoomFactor, middle);
    break;
  case Qt::Key_S:
    zoom(1 / kKeyZoomFactor, middle);
    break;
  case Qt::Key_A:
    pan(kKeyPanShare * viewport_.width());
    break;
  case Qt::Key_D:
    pan(-kKeyPanShare * viewport_.width());
    break;
  default:
    QWidget::keyPressEvent(event);
    return;
  }
  event->accept();
}

void TimelineCanvas::wheelEvent(QWheelEvent* event) {
  const int row = row_at(static_cast<int>(event->position().y()));
  if ((event->modifiers() & Qt::ControlModifier) && row >= 0) {
    resize_rank(rows_[static_cast<std::size_t>(row)].rank,
                std::pow(kWheelZoomPerNotch, event->angleDelta().y() / 120.0));
    event->accept();
    return;
  }
  zoom(std::pow(kWheelZoomPerNotch, event->angleDelta().y() / 120.0), event->position().x());
  event->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton)
    return;
  const auto position = event->position().toPoint();
  if (const auto rank = resize_handle_at(position)) {
    lane_drag_ = LaneDrag{*rank, position.y(), lanes_height(*rank)};
    return;
  }
  drag_origin_ = position;
  dragged_ = false;
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* event) {
  const auto position = event->position().toPoint();
  if (lane_drag_ && (event->buttons() & Qt::LeftButton)) {
    set_lanes_height(lane_drag_->rank, lane_drag_->start_height + position.y() - lane_drag_->origin_y);
    return;
  }
  if (drag_origin_ && (event->buttons() & Qt::LeftButton)) {
    const int dx = position.x() - drag_origin_->x();
    if (dragged_ || std::abs(dx) >= kDragThresholdPixels) {
      dragged_ = true;
      pan(dx);
      drag_origin_ = position;
    }
    return;
  }
  // The edge a drag would resize shows the resize cursor.
  if (resize_handle_at(position))
    setCursor(Qt::SplitVCursor);
  else
    unsetCursor();
  const auto text = describe_at(position);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* event) {
  const auto position = event->position().toPoint();
  if (event->button() == Qt::LeftButton && drag_origin_ && !dragged_) {
    const int row = row_at(position.y());
    if (const auto chip = setup_chip(); chip && chip->contains(position))
      show_setup();
    else if (position.x() < kGutterWidth && row >= 0)
      toggle_collapsed(rows_[static_cast<std::size_t>(row)].rank);
    else
      select_at(position);
  }
  drag_origin_.reset();
  lane_drag_.reset();
}

void TimelineCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (const auto* phase = phase_in_band_at(event->position().toPoint()))
    show_phase(phase->phase);
  else
    QWidget::mouseDoubleClickEvent(event);
}

} // namespace commlens::viewer
