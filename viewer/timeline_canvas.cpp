#include "timeline_canvas.hpp"

#include "format.hpp"
#include "function_colors.hpp"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace commlens::viewer {
namespace {

constexpr double kWheelZoomPerNotch = 1.25;
constexpr int kDragThresholdPixels = 3;
constexpr double kHitSlackPixels = 2;

// The ruler's tick step: 1, 2 or 5 times a power of ten, at least `minimum_ns` apart.
std::int64_t tick_step(double minimum_ns) {
  auto step = std::int64_t{1};
  while (true)
    for (const int multiple : {1, 2, 5})
      if (static_cast<double>(step * multiple) >= minimum_ns)
        return step * multiple;
      else if (multiple == 5)
        step *= 10;
}

} // namespace

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent), fetcher_(this) {
  setMouseTracking(true);
  setMinimumSize(400, 200);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
  connect(&fetcher_, &TimelineFetcher::updated, this, qOverload<>(&QWidget::update));
}

void TimelineCanvas::set_database(std::shared_ptr<const LoadedDatabase> database) {
  database_ = std::move(database);
  selection_.reset();
  highlighted_function_.reset();
  viewport_.set_width(std::max(1, width() - kGutterWidth));
  viewport_.set_extent(database_->timeline.start_ns, database_->timeline.end_ns);
  fetcher_.set_source(database_->path, database_->timeline.lanes);
  request_window();
  update();
}

void TimelineCanvas::zoom(double factor, double x) {
  viewport_.zoom(factor, x - kGutterWidth);
  request_window();
}

void TimelineCanvas::pan(double dx) {
  viewport_.pan_pixels(dx);
  request_window();
}

void TimelineCanvas::show_range(std::int64_t start_ns, std::int64_t end_ns) {
  viewport_.show(start_ns, end_ns);
  request_window();
}

void TimelineCanvas::show_all() {
  viewport_.show_all();
  request_window();
}

void TimelineCanvas::request_window() {
  if (!database_)
    return;
  // Query slightly beyond both edges so a short pan shows calls at once while the next query runs.
  const auto overscan = viewport_.span_ns() / 4;
  fetcher_.request(viewport_.start_ns() - overscan, viewport_.end_ns() + overscan,
                   std::max<std::int64_t>(1, std::llround(viewport_.ns_per_pixel())));
  update();
}

void TimelineCanvas::wait_for_data() {
  fetcher_.wait_until_idle();
}

int TimelineCanvas::lane_height() const {
  const int lanes = database_ ? std::max<int>(1, static_cast<int>(database_->timeline.lanes.size())) : 1;
  return std::clamp((height() - kRulerHeight - kPhaseBandHeight - 4) / lanes, 6, 28);
}

int TimelineCanvas::lane_at(int y) const {
  if (!database_ || y < kRulerHeight + kPhaseBandHeight)
    return -1;
  const int lane = (y - kRulerHeight - kPhaseBandHeight) / lane_height();
  return lane < static_cast<int>(database_->timeline.lanes.size()) ? lane : -1;
}

const analysis::TimelineCall* TimelineCanvas::call_at(QPoint position, int* lane_index) const {
  *lane_index = lane_at(position.y());
  const auto& lanes = fetcher_.snapshot().lanes;
  if (*lane_index < 0 || *lane_index >= static_cast<int>(lanes.size()) || position.x() < kGutterWidth)
    return nullptr;
  const double x = position.x() - kGutterWidth;
  const auto slack = static_cast<std::int64_t>(kHitSlackPixels * viewport_.ns_per_pixel());
  const auto time = viewport_.time_at(x);
  const auto& calls = lanes[static_cast<std::size_t>(*lane_index)].calls;
  // Calls are sorted by start and do not overlap on one thread: the candidate is the last call that
  // starts before the cursor (plus slack).
  auto after =
      std::upper_bound(calls.begin(), calls.end(), time + slack,
                       [](std::int64_t t, const analysis::TimelineCall& call) { return t < call.start_ns; });
  if (after == calls.begin())
    return nullptr;
  const auto& candidate = *std::prev(after);
  return candidate.end_ns + slack >= time ? &candidate : nullptr;
}

const analysis::TimelineBin* TimelineCanvas::bin_at(QPoint position, int lane_index) const {
  const auto& lanes = fetcher_.snapshot().lanes;
  if (lane_index < 0 || lane_index >= static_cast<int>(lanes.size()))
    return nullptr;
  const auto time = viewport_.time_at(position.x() - kGutterWidth);
  const auto slack = static_cast<std::int64_t>(kHitSlackPixels * viewport_.ns_per_pixel());
  for (const auto& bin : lanes[static_cast<std::size_t>(lane_index)].bins)
    if (bin.start_ns - slack <= time && time <= bin.end_ns + slack)
      return &bin;
  return nullptr;
}

QString TimelineCanvas::describe(const SelectedCall& selected) const {
  const auto& call = selected.call;
  return tr("<b>%1</b> &middot; rank %2, thread %3<br>start %4, duration %5<br>bytes sent %6, received %7<br>"
            "peer %8 &middot; tag %9 &middot; communicator %10<br>implementation %11 &middot; phase %12 "
            "&middot; "
            "call id %13")
      .arg(database_->function_name(call.function_id))
      .arg(selected.lane.rank)
      .arg(selected.lane.thread)
      .arg(format_duration(call.start_ns - database_->timeline.start_ns),
           format_duration(call.end_ns - call.start_ns),
           format_bytes(static_cast<std::uint64_t>(call.bytes_sent)),
           format_bytes(static_cast<std::uint64_t>(call.bytes_recv)), format_peer(call.peer),
           call.tag ? QString::number(*call.tag) : tr("none"),
           database_->communicator_label(call.comm_id).toHtmlEscaped(),
           database_->implementation_name(call.implementation))
      .arg(call.phase)
      .arg(call.id);
}

QString TimelineCanvas::describe_at(QPoint position) const {
  if (!database_)
    return {};
  int lane_index = -1;
  if (const auto* call = call_at(position, &lane_index))
    return describe({database_->timeline.lanes[static_cast<std::size_t>(lane_index)], *call});
  if (const auto* bin = bin_at(position, lane_index)) {
    const auto span = std::max<std::int64_t>(bin->end_ns - bin->start_ns, 1);
    return tr("<b>%1 calls</b> shorter than a pixel, mostly %2<br>busy %3 of %4 (%5 %)<br>zoom in to see "
              "them one by one")
        .arg(format_count(bin->calls), database_->function_name(bin->dominant_function_id),
             format_duration(bin->busy_ns), format_duration(span))
        .arg(std::min(100.0, 100.0 * static_cast<double>(bin->busy_ns) / static_cast<double>(span)), 0, 'f',
             0);
  }
  return {};
}

bool TimelineCanvas::select_at(QPoint position) {
  int lane_index = -1;
  const auto* call = database_ ? call_at(position, &lane_index) : nullptr;
  if (!call) {
    selection_.reset();
    emit selection_changed({});
    update();
    return false;
  }
  select({database_->timeline.lanes[static_cast<std::size_t>(lane_index)], *call});
  return true;
}

void TimelineCanvas::select(const SelectedCall& selected) {
  selection_ = selected;
  emit selection_changed(describe(selected));
  update();
}

void TimelineCanvas::highlight_function(std::optional<int> function_id) {
  highlighted_function_ = function_id;
  update();
}

QColor TimelineCanvas::color_of(int function_id) const {
  const auto color = function_color(database_->function_name(function_id));
  if (highlighted_function_ && *highlighted_function_ != function_id)
    return QColor(225, 225, 225);
  return color;
}

void TimelineCanvas::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  viewport_.set_width(std::max(1, width() - kGutterWidth));
  request_window();
}

void TimelineCanvas::wheelEvent(QWheelEvent* event) {
  zoom(std::pow(kWheelZoomPerNotch, event->angleDelta().y() / 120.0), event->position().x());
  event->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    drag_origin_ = event->position().toPoint();
    dragged_ = false;
  }
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* event) {
  const auto position = event->position().toPoint();
  if (drag_origin_ && (event->buttons() & Qt::LeftButton)) {
    const int dx = position.x() - drag_origin_->x();
    if (dragged_ || std::abs(dx) >= kDragThresholdPixels) {
      dragged_ = true;
      pan(dx);
      drag_origin_ = position;
    }
    return;
  }
  const auto text = describe_at(position);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && drag_origin_ && !dragged_)
    select_at(event->position().toPoint());
  drag_origin_.reset();
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (!database_ || database_->timeline.lanes.empty()) {
    painter.drawText(rect(), Qt::AlignCenter,
                     database_ ? tr("No traced calls: this database was recorded in summary mode "
                                    "(COMMLENS_MODE=trace records the timeline).")
                               : tr("No database open."));
    return;
  }
  paint_ruler(painter);
  paint_phases(painter);
  for (int lane = 0; lane < static_cast<int>(database_->timeline.lanes.size()); ++lane)
    paint_lane(painter, lane);
}

void TimelineCanvas::paint_ruler(QPainter& painter) const {
  painter.fillRect(0, 0, width(), kRulerHeight, QColor(245, 245, 245));
  const auto step = tick_step(90 * viewport_.ns_per_pixel());
  const auto origin = database_->timeline.start_ns;
  // Ticks sit on multiples of the step counted from the trace start, so labels read 0, 2 ms, 4 ms.
  auto tick = origin + ((viewport_.start_ns() - origin) / step) * step;
  painter.setPen(Qt::darkGray);
  for (; tick <= viewport_.end_ns(); tick += step) {
    const int x = kGutterWidth + static_cast<int>(viewport_.x_of(tick));
    if (x < kGutterWidth)
      continue;
    painter.drawLine(x, kRulerHeight - 6, x, kRulerHeight);
    painter.drawText(x + 3, kRulerHeight - 8, format_duration(tick - origin));
  }
  painter.drawText(4, kRulerHeight - 8, format_duration(viewport_.span_ns()));
}

void TimelineCanvas::paint_phases(QPainter& painter) const {
  const int top = kRulerHeight;
  for (const auto& phase : database_->report.phases) {
    const auto end = phase.end_ns.value_or(database_->timeline.end_ns);
    const double x0 = std::max(0.0, viewport_.x_of(phase.start_ns));
    const double x1 = std::min(double(viewport_.width()), viewport_.x_of(end));
    if (x1 <= x0)
      continue;
    const QRectF band(kGutterWidth + x0, top + 1, x1 - x0, kPhaseBandHeight - 2);
    painter.fillRect(band, phase.phase % 2 ? QColor(255, 236, 200) : QColor(210, 230, 255));
    painter.setPen(Qt::black);
    painter.drawText(band, Qt::AlignLeft | Qt::AlignVCenter, tr(" phase %1").arg(phase.phase));
  }
  painter.drawText(QRect(2, top, kGutterWidth - 4, kPhaseBandHeight), Qt::AlignVCenter, tr("phases"));
}

void TimelineCanvas::paint_lane(QPainter& painter, int lane_index) const {
  const auto& lane = database_->timeline.lanes[static_cast<std::size_t>(lane_index)];
  const int height = lane_height();
  const int top = kRulerHeight + kPhaseBandHeight + lane_index * height;
  painter.fillRect(0, top, width(), height, lane_index % 2 ? QColor(250, 250, 250) : QColor(240, 243, 247));
  painter.setPen(Qt::black);
  const bool threaded =
      lane.thread != 0 || std::count_if(database_->timeline.lanes.begin(), database_->timeline.lanes.end(),
                                        [&](const auto& other) { return other.rank == lane.rank; }) > 1;
  painter.drawText(QRect(4, top, kGutterWidth - 6, height), Qt::AlignVCenter,
                   threaded ? tr("rank %1 t%2").arg(lane.rank).arg(lane.thread)
                            : tr("rank %1").arg(lane.rank));

  const auto& lanes = fetcher_.snapshot().lanes;
  if (lane_index >= static_cast<int>(lanes.size()))
    return;
  painter.save();
  painter.setClipRect(kGutterWidth, top, width() - kGutterWidth, height);
  const auto& window = lanes[static_cast<std::size_t>(lane_index)];
  const int inner = height - 4;
  for (const auto& bin : window.bins) {
    const double x0 = viewport_.x_of(bin.start_ns), x1 = std::max(viewport_.x_of(bin.end_ns), x0 + 1);
    const auto span = std::max<std::int64_t>(bin.end_ns - bin.start_ns, 1);
    // Height shows how busy the merged span was, so a dense burst stands out from a sparse one.
    const double busy = std::clamp(static_cast<double>(bin.busy_ns) / static_cast<double>(span), 0.25, 1.0);
    const double bar = inner * busy;
    painter.fillRect(QRectF(kGutterWidth + x0, top + 2 + (inner - bar), x1 - x0, bar),
                     color_of(bin.dominant_function_id));
  }
  for (const auto& call : window.calls) {
    const double x0 = viewport_.x_of(call.start_ns), x1 = std::max(viewport_.x_of(call.end_ns), x0 + 1);
    if (x1 < 0 || x0 > viewport_.width())
      continue;
    const QRectF box(kGutterWidth + x0, top + 2, x1 - x0, inner);
    painter.fillRect(box, color_of(call.function_id));
    if (box.width() > 40) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       database_->function_name(call.function_id));
    }
  }
  if (selection_ && selection_->lane == lane) {
    const double x0 = viewport_.x_of(selection_->call.start_ns);
    const double x1 = std::max(viewport_.x_of(selection_->call.end_ns), x0 + 2);
    painter.setPen(QPen(Qt::black, 2));
    painter.drawRect(QRectF(kGutterWidth + x0, top + 1, x1 - x0, height - 2));
  }
  painter.restore();
}

} // namespace commlens::viewer
