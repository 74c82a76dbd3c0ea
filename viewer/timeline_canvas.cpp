#include "timeline_canvas.hpp"

#include "format.hpp"
#include "palette.hpp"
#include "timeline_annotations.hpp"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace commlens::viewer {

ImplementationStyle implementation_style(const QString& implementation_name) {
  if (implementation_name.startsWith(QLatin1String("runtime:")))
    return ImplementationStyle::Runtime;
  if (implementation_name.startsWith(QLatin1String("mpi:")))
    return ImplementationStyle::Baseline;
  return ImplementationStyle::Mpi;
}

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent), fetcher_(this) {
  setMouseTracking(true);
  setMinimumSize(400, kMinimumCanvasHeight);
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
  // A training run opens on its steady steps: set-up (NCCL's communicators take seconds) and the
  // warm-up step would squeeze the steps into a few pixels each.
  if (const auto steps = database_->phase_names.opening_window(database_->timeline.end_ns))
    viewport_.show(steps->first, steps->second);
  // Phases get one band across the ranks; a rank's own phases show under its NVTX ranges.
  phase_band_ = database_->report.phases.size() > 1;
  rows_ = layout_timeline_rows(database_->timeline, database_->timeline.has_ranges, database_->gpu_streams,
                               database_->has_synchronizations, database_->cuda_api_threads);
  sizing_ = {};
  fit_rows();
  fetcher_.set_source(database_->path, database_->timeline, database_->gpu_streams,
                      database_->has_synchronizations, database_->cuda_api_threads);
  request_window();
  update();
}

std::optional<QRectF> TimelineCanvas::setup_chip() const {
  if (!database_ || !phase_band_)
    return std::nullopt;
  const auto setup = database_->phase_names.setup(database_->timeline.end_ns);
  // Folded only while the window starts after the set-up: then it is a chip at the band's left.
  if (!setup || viewport_.start_ns() < setup->second)
    return std::nullopt;
  // In the band's gutter, where it hides none of the band.
  return QRectF(2, header_top() + kRulerHeight + 1, kGutterWidth - 6, kPhaseBandHeight - 2);
}

void TimelineCanvas::show_setup() {
  // Phase 0 starts when the profiler does, often before the first call: the trace starts with that.
  if (const auto setup = database_ ? database_->phase_names.setup(database_->timeline.end_ns) : std::nullopt)
    show_range(std::max(setup->first, database_->timeline.start_ns),
               std::max(setup->second, viewport_.end_ns()));
}

void TimelineCanvas::show_phase(int phase) {
  if (const auto span =
          database_ ? database_->phase_names.span(phase, database_->timeline.end_ns) : std::nullopt)
    show_range(span->first, span->second);
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

void TimelineCanvas::fit_rows() {
  // Taller than its scroll area where the rows need it: every lane stays readable, the ruler and
  // the phase band stay pinned to the visible top (header_top).
  setMinimumHeight(std::max(kMinimumCanvasHeight, lanes_top() + comfortable_height(rows_, sizing_) + 2));
  relayout();
}

int TimelineCanvas::header_top() const {
  return std::max(0, visibleRegion().boundingRect().top());
}

void TimelineCanvas::toggle_collapsed(int rank) {
  auto& collapsed = sizing_.collapsed;
  const auto found = std::find(collapsed.begin(), collapsed.end(), rank);
  if (found == collapsed.end())
    collapsed.push_back(rank);
  else
    collapsed.erase(found);
  fit_rows();
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
  if (!database_ || y < header_top() + lanes_top()) // under the pinned ruler and band
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
  if (const auto span = analysis::query_copy_span(*database_->database, selection.route, selection.rank,
                                                  selection.device)) {
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

} // namespace commlens::viewer
