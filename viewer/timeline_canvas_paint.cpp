// The timeline canvas' painting: the ruler, the band of phases (with the set-up folded to a chip
// while the window shows the steps), every row (calls, ranges, CUDA synchronisations, GPU streams)
// and the lines of messages. Kept apart from the state and layout in timeline_canvas.cpp.
#include "timeline_canvas.hpp"

#include "format.hpp"
#include "palette.hpp"
#include "timeline_annotations.hpp"
#include "timeline_streams.hpp"

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

void TimelineCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (!database_ || database_->timeline.lanes.empty()) {
    painter.drawText(rect(), Qt::AlignCenter,
                     database_ ? tr("No traced calls: this database was recorded in summary mode "
                                    "(COMMLENS_MODE=trace records the timeline).")
                               : tr("No database open."));
    return;
  }
  for (std::size_t row = 0; row < rows_.size(); ++row)
    paint_row(painter, row);
  paint_kernel_links(painter);
  paint_messages(painter);
  // Last, over the rows scrolled beneath them.
  painter.translate(0, header_top());
  paint_ruler(painter);
  paint_phase_band(painter);
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
  painter.setClipRect(kGutterWidth, lanes_top(), width() - kGutterWidth, height() - lanes_top());
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
  painter.fillRect(QRectF(0, kRulerHeight, width(), kPhaseBandHeight), Qt::white);
  if (auto chip = setup_chip()) {
    chip->translate(0, -header_top()); // the painter is already at the header's top
    painter.fillRect(*chip, QColor(215, 232, 255));
    painter.setPen(QColor(90, 110, 140));
    painter.drawRect(*chip);
    painter.setPen(Qt::black);
    painter.drawText(*chip, Qt::AlignCenter, tr("\u25c2 set-up"));
  } else {
    painter.setPen(Qt::darkGray);
    painter.drawText(QRect(4, kRulerHeight, kGutterWidth - 6, kPhaseBandHeight), Qt::AlignVCenter,
                     tr("phases"));
  }
  painter.save();
  painter.setClipRect(band);
  paint_phases(painter, viewport_, band, database_->report.phases, database_->phase_names,
               database_->timeline.end_ns);
  painter.restore();
}

const analysis::PhaseStats* TimelineCanvas::phase_in_band_at(QPoint position) const {
  const int y = position.y() - header_top();
  if (!phase_band_ || position.x() < kGutterWidth || y < kRulerHeight || y >= kRulerHeight + kPhaseBandHeight)
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
  const auto label = row_label(row);
  painter.setPen(calls ? Qt::black : Qt::darkGray);
  if (area.height() >= fontMetrics().height() - 4)
    painter.drawText(QRect(4, area.top(), kGutterWidth - 6, area.height()), Qt::AlignVCenter,
                     fontMetrics().elidedText(label, Qt::ElideRight, kGutterWidth - 8));
  else if (area.height() >= 8 && row.kind != TimelineRowKind::Calls) {
    QFont small = font();
    small.setPixelSize(area.height() - 2);
    painter.setFont(small);
    painter.drawText(QRect(4, area.top(), kGutterWidth - 6, area.height()), Qt::AlignVCenter, label);
    painter.setFont(font());
  }

  const auto& snapshot = fetcher_.snapshot();
  painter.save();
  const QRect plot(kGutterWidth, area.top(), width() - kGutterWidth, area.height());
  painter.setClipRect(plot);
  switch (row.kind) {
  case TimelineRowKind::Calls:
    paint_lane(painter, row, plot);
    break;
  case TimelineRowKind::Stream:
    if (row.index < snapshot.streams.size())
      paint_stream(painter, viewport_, plot, snapshot.streams[row.index], row.rank, *database_,
                   copy_selection_);
    break;
  case TimelineRowKind::CudaApi:
    if (row.index < snapshot.api_calls.size())
      paint_api_calls(painter, viewport_, plot, snapshot.api_calls[row.index]);
    break;
  case TimelineRowKind::Synchronizations:
    if (row.index < snapshot.synchronizations.size())
      paint_synchronizations(painter, viewport_, plot, snapshot.synchronizations[row.index]);
    break;
  case TimelineRowKind::Ranges:
    paint_ranges(painter, viewport_, plot,
                 row.index < snapshot.ranges.size() ? snapshot.ranges[row.index]
                                                    : std::vector<analysis::TimelineRange>{},
                 phases_of(row.rank), database_->phase_names, database_->timeline.end_ns);
    break;
  }
  painter.restore();
}

QString TimelineCanvas::row_label(const TimelineRow& row) const {
  switch (row.kind) {
  case TimelineRowKind::Ranges:
    return tr("  ranges");
  case TimelineRowKind::CudaApi: {
    const auto& thread = database_->cuda_api_threads[row.index];
    const bool several = std::count_if(database_->cuda_api_threads.begin(), database_->cuda_api_threads.end(),
                                       [&](const auto& other) { return other.rank == thread.rank; }) > 1;
    return api_lane_label(thread, several);
  }
  case TimelineRowKind::Synchronizations:
    return tr("  CUDA sync");
  case TimelineRowKind::Stream:
    return QStringLiteral(" ") + stream_label(database_->gpu_streams[row.index]);
  case TimelineRowKind::Calls:
    break;
  }
  const auto& lane = database_->timeline.lanes[row.index];
  const bool threaded =
      lane.thread != 0 || std::count_if(database_->timeline.lanes.begin(), database_->timeline.lanes.end(),
                                        [&](const auto& other) { return other.rank == row.rank; }) > 1;
  // The triangle says the name is a button: it folds the rank's rows away or opens them.
  const auto marker = collapsed(row.rank) ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ");
  return threaded ? marker + tr("rank %1 t%2").arg(row.rank).arg(lane.thread)
                  : marker + tr("rank %1").arg(row.rank);
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
