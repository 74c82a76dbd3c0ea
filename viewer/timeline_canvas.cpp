#include "timeline_canvas.hpp"

#include "format.hpp"
#include "function_colors.hpp"
#include "timeline_annotations.hpp"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace commlens::viewer {
namespace {

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

ImplementationStyle implementation_style(const QString& implementation_name) {
  if (implementation_name.startsWith(QLatin1String("runtime:")))
    return ImplementationStyle::Runtime;
  if (implementation_name.startsWith(QLatin1String("mpi:")))
    return ImplementationStyle::Baseline;
  return ImplementationStyle::Mpi;
}

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent), fetcher_(this) {
  setMouseTracking(true);
  setMinimumSize(400, 200);
  setFocusPolicy(Qt::StrongFocus);
  setAutoFillBackground(true);
  setPalette(QPalette(Qt::white));
  connect(&fetcher_, &TimelineFetcher::updated, this, qOverload<>(&QWidget::update));
}

void TimelineCanvas::set_database(std::shared_ptr<const LoadedDatabase> database) {
  database_ = std::move(database);
  selection_.reset();
  highlighted_function_.reset();
  copy_selection_.reset();
  viewport_.set_width(std::max(1, width() - kGutterWidth));
  viewport_.set_extent(database_->timeline.start_ns, database_->timeline.end_ns);
  // Phases get one band across the ranks; a rank's own phases show under its NVTX ranges.
  phase_band_ = database_->report.phases.size() > 1;
  rows_ = layout_timeline_rows(database_->timeline, database_->timeline.has_ranges, database_->has_kernels);
  sizing_ = {};
  relayout();
  fetcher_.set_source(database_->path, database_->timeline, database_->has_kernels);
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

void TimelineCanvas::centre_on(std::int64_t time_ns) {
  const auto span = viewport_.span_ns();
  show_range(time_ns - span / 2, time_ns - span / 2 + span);
}

void TimelineCanvas::request_window() {
  if (!database_)
    return;
  // Query slightly beyond both edges so a short pan shows calls at once while the next query runs.
  const auto overscan = viewport_.span_ns() / 4;
  fetcher_.request(viewport_.start_ns() - overscan, viewport_.end_ns() + overscan,
                   std::max<std::int64_t>(1, std::llround(viewport_.ns_per_pixel())));
  emit viewport_changed();
  update();
}

void TimelineCanvas::wait_for_data() {
  fetcher_.wait_until_idle();
}

void TimelineCanvas::relayout() {
  const int top = lanes_top();
  row_tops_ = row_tops(rows_, top, height() - top - 2, sizing_);
  update();
}

void TimelineCanvas::toggle_collapsed(int rank) {
  auto& collapsed = sizing_.collapsed;
  const auto found = std::find(collapsed.begin(), collapsed.end(), rank);
  if (found == collapsed.end())
    collapsed.push_back(rank);
  else
    collapsed.erase(found);
  relayout();
}

bool TimelineCanvas::collapsed(int rank) const {
  return sizing_.is_collapsed(rank);
}

void TimelineCanvas::resize_rank(int rank, double factor) {
  set_rank_weight(rank, sizing_.weight(rank) * factor);
}

void TimelineCanvas::set_rank_weight(int rank, double weight) {
  constexpr double kSmallest = 0.05, kLargest = 50; // next to its neighbours' share of 1
  sizing_.weights[rank] = std::clamp(weight, kSmallest, kLargest);
  relayout();
}

int TimelineCanvas::lanes_height(int rank) const {
  int height = 0;
  for (std::size_t row = 0; row < rows_.size(); ++row)
    if (rows_[row].rank == rank && rows_[row].kind == TimelineRowKind::Calls)
      height += row_rect(row).height();
  return height;
}

void TimelineCanvas::set_lanes_height(int rank, int pixels) {
  set_rank_weight(rank, weight_for_lanes_height(rows_, height() - lanes_top() - 2, sizing_, rank, pixels));
}

int TimelineCanvas::lanes_top() const {
  return kRulerHeight + phase_band_height();
}

QRect TimelineCanvas::row_rect(std::size_t index) const {
  if (index + 1 >= row_tops_.size())
    return {};
  return {0, row_tops_[index], width(), row_tops_[index + 1] - row_tops_[index]};
}

int TimelineCanvas::row_at(int y) const {
  if (!database_ || y < kRulerHeight)
    return -1;
  for (std::size_t row = 0; row + 1 < row_tops_.size(); ++row)
    if (row_tops_[row] <= y && y < row_tops_[row + 1])
      return static_cast<int>(row);
  return -1;
}

ImplementationStyle TimelineCanvas::style_of(const analysis::TimelineCall& call) const {
  return implementation_style(database_->implementation_name(call.implementation));
}

const analysis::TimelineCall* TimelineCanvas::call_at(QPoint position, int* lane_index) const {
  const int row = row_at(position.y());
  const bool on_calls = row >= 0 && rows_[static_cast<std::size_t>(row)].kind == TimelineRowKind::Calls;
  *lane_index = on_calls ? static_cast<int>(rows_[static_cast<std::size_t>(row)].index) : -1;
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

bool TimelineCanvas::select_at(QPoint position) {
  int lane_index = -1;
  const auto* call = database_ ? call_at(position, &lane_index) : nullptr;
  if (!call) {
    selection_.reset();
    emit selection_changed(database_ ? describe_annotation_at(position) : QString());
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

void TimelineCanvas::select_copies(const CopySelection& selection) {
  copy_selection_ = selection;
  if (const auto span = analysis::query_copy_span(*database_->database, selection.path, selection.link,
                                                  selection.rank, selection.device)) {
    const auto margin = std::max<std::int64_t>((span->second - span->first) / 20, 100);
    show_range(span->first - margin, span->second + margin);
  }
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
  relayout();
  request_window();
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
  paint_phase_band(painter);
  for (std::size_t row = 0; row < rows_.size(); ++row)
    paint_row(painter, row);
  paint_kernel_links(painter);
  paint_messages(painter);
}

std::vector<QLineF> TimelineCanvas::message_lines() const {
  std::vector<QLineF> lines;
  const auto middle_of = [&](const analysis::TimelineLane& lane) -> std::optional<double> {
    for (std::size_t row = 0; row < rows_.size(); ++row)
      if (rows_[row].kind == TimelineRowKind::Calls && database_->timeline.lanes[rows_[row].index] == lane)
        return row_rect(row).center().y();
    return std::nullopt;
  };
  for (const auto& message : fetcher_.snapshot().messages) {
    const auto from = middle_of(message.sender), to = middle_of(message.receiver);
    if (from && to)
      lines.emplace_back(kGutterWidth + viewport_.x_of(message.send_ns), *from,
                         kGutterWidth + viewport_.x_of(message.received_ns), *to);
  }
  return lines;
}

void TimelineCanvas::paint_messages(QPainter& painter) const {
  painter.save();
  painter.setClipRect(kGutterWidth, kRulerHeight, width() - kGutterWidth, height() - kRulerHeight);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(QColor(40, 40, 40, 170), 1.2));
  for (const auto& line : message_lines()) {
    painter.drawLine(line);
    painter.drawEllipse(line.p2(), 2.5, 2.5); // the receiving end
  }
  painter.restore();
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
    painter.drawText(x + 3, kRulerHeight - 8, format_position(tick - origin, step));
  }
  // The window's width, in the gutter where no tick is: it reads as a span, not as a position.
  painter.setPen(Qt::black);
  painter.drawText(QRect(2, 0, kGutterWidth - 4, kRulerHeight), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("\u2194 %1").arg(format_duration(viewport_.span_ns())));
}

void TimelineCanvas::paint_phase_band(QPainter& painter) const {
  if (!phase_band_)
    return;
  const QRectF band(kGutterWidth, kRulerHeight, width() - kGutterWidth, kPhaseBandHeight);
  painter.setPen(Qt::darkGray);
  painter.drawText(QRect(4, kRulerHeight, kGutterWidth - 6, kPhaseBandHeight), Qt::AlignVCenter,
                   tr("phases"));
  painter.save();
  painter.setClipRect(band);
  paint_phases(painter, viewport_, band, database_->report.phases, database_->report.training_steps,
               database_->timeline.end_ns);
  painter.restore();
}

const analysis::PhaseStats* TimelineCanvas::phase_in_band_at(QPoint position) const {
  if (!phase_band_ || position.x() < kGutterWidth || position.y() < kRulerHeight ||
      position.y() >= kRulerHeight + kPhaseBandHeight)
    return nullptr;
  const auto time = viewport_.time_at(position.x() - kGutterWidth);
  for (const auto& phase : database_->report.phases)
    if (phase.start_ns <= time && time < phase.end_ns.value_or(database_->timeline.end_ns))
      return &phase;
  return nullptr;
}

void TimelineCanvas::paint_row(QPainter& painter, std::size_t row_index) const {
  const auto& row = rows_[row_index];
  const auto area = row_rect(row_index);
  if (area.height() <= 0)
    return;
  const bool calls = row.kind == TimelineRowKind::Calls;
  // Each rank's rows share one background shade, so they read as a group.
  painter.fillRect(area, row.rank % 2 ? QColor(250, 250, 250) : QColor(240, 243, 247));
  const bool threaded =
      calls && (database_->timeline.lanes[row.index].thread != 0 ||
                std::count_if(database_->timeline.lanes.begin(), database_->timeline.lanes.end(),
                              [&](const auto& other) { return other.rank == row.rank; }) > 1);
  const auto annotation_label = [&] {
    switch (row.kind) {
    case TimelineRowKind::Copies:
      return tr("  copies");
    case TimelineRowKind::Kernels:
      return tr("  kernels");
    default:
      return tr("  ranges");
    }
  };
  // The triangle says the name is a button: it folds the rank's rows away or opens them.
  const auto marker = collapsed(row.rank) ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ");
  const auto label =
      !calls     ? annotation_label()
      : threaded ? marker + tr("rank %1 t%2").arg(row.rank).arg(database_->timeline.lanes[row.index].thread)
                 : marker + tr("rank %1").arg(row.rank);
  painter.setPen(calls ? Qt::black : Qt::darkGray);
  if (area.height() >= fontMetrics().height() - 4)
    painter.drawText(QRect(4, area.top(), kGutterWidth - 6, area.height()), Qt::AlignVCenter, label);

  const auto& snapshot = fetcher_.snapshot();
  painter.save();
  const QRect plot(kGutterWidth, area.top(), width() - kGutterWidth, area.height());
  painter.setClipRect(plot);
  if (calls)
    paint_lane(painter, row, plot);
  else if (row.kind == TimelineRowKind::Copies && row.index < snapshot.copies.size())
    paint_copies(painter, viewport_, plot, row.rank, snapshot.copies[row.index], copy_selection_);
  else if (row.kind == TimelineRowKind::Kernels && row.index < snapshot.kernels.size())
    paint_kernels(painter, viewport_, plot, snapshot.kernels[row.index]);
  else if (row.kind == TimelineRowKind::Ranges)
    paint_ranges(painter, viewport_, plot,
                 row.index < snapshot.ranges.size() ? snapshot.ranges[row.index]
                                                    : std::vector<analysis::TimelineRange>{},
                 phases_of(row.rank), database_->timeline.end_ns);
  painter.restore();
}

void TimelineCanvas::paint_lane(QPainter& painter, const TimelineRow& row, const QRect& area) const {
  const auto& lanes = fetcher_.snapshot().lanes;
  if (row.index >= lanes.size())
    return;
  const auto& window = lanes[row.index];
  const int top = area.top();
  const int inner = area.height() - 4;
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
    switch (style_of(call)) {
    case ImplementationStyle::Runtime:
      painter.fillRect(box, QBrush(QColor(0, 90, 40), Qt::BDiagPattern));
      break;
    case ImplementationStyle::Baseline:
      painter.setPen(QPen(QColor(120, 20, 20), 2, Qt::DashLine));
      painter.drawRect(box.adjusted(0.5, 0.5, -0.5, -0.5));
      break;
    case ImplementationStyle::Mpi:
      break;
    }
    if (box.width() > 40) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       database_->function_name(call.function_id));
    }
  }
  if (selection_ && selection_->lane == database_->timeline.lanes[row.index]) {
    const double x0 = viewport_.x_of(selection_->call.start_ns);
    const double x1 = std::max(viewport_.x_of(selection_->call.end_ns), x0 + 2);
    painter.setPen(QPen(Qt::black, 2));
    painter.drawRect(QRectF(kGutterWidth + x0, top + 1, x1 - x0, area.height() - 2));
  }
}

} // namespace commlens::viewer
