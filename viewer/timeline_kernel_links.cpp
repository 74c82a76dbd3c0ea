// The timeline canvas' GPU work per call: the dashed lines from a call (an NCCL call, or an MPI call
// the GPU runtime ran) down to its time on the GPU (device_spans) and to the kernels it launched, on
// their stream lanes, and the tooltip lines that give that time, list those kernels and, when the
// file has the nccl_calls side table, say what NCCL said about the call. Kernels belong to a call
// through cuda_kernels.mpi_call_id, spans through device_spans.call_id. Likewise from each CUDA API
// call to the kernel, copy or memset it made: the one with its correlation id.
#include "timeline_canvas.hpp"

#include "format.hpp"
#include "nccl_call_details.hpp"
#include "palette.hpp"

#include <QPainter>

#include <algorithm>
#include <unordered_map>

namespace commlens::viewer {
namespace {

constexpr int kKernelsListed = 3; // in a call's tooltip; the rest are counted

} // namespace

std::vector<QLineF> TimelineCanvas::kernel_links() const {
  std::vector<QLineF> lines;
  if (!database_ || database_->gpu_streams.empty())
    return lines;
  const auto& snapshot = fetcher_.snapshot();
  // Per rank: where each call drawn on its own sits (x of its start, bottom of its lane).
  std::unordered_map<int, std::unordered_map<std::int64_t, QPointF>> call_feet;
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const auto& current = rows_[row];
    const auto area = row_rect(row);
    if (current.kind != TimelineRowKind::Calls || area.height() <= 0 ||
        current.index >= snapshot.lanes.size())
      continue;
    for (const auto& call : snapshot.lanes[current.index].calls)
      call_feet[current.rank][call.id] = {kGutterWidth + viewport_.x_of(call.start_ns),
                                          double(area.bottom())};
  }
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const auto& current = rows_[row];
    const auto area = row_rect(row);
    const auto calls = call_feet.find(current.rank);
    if (current.kind != TimelineRowKind::Stream || area.height() <= 0 || calls == call_feet.end() ||
        current.index >= snapshot.streams.size())
      continue;
    const auto link = [&](std::optional<std::int64_t> call_id, std::int64_t start_ns) {
      const auto call = call_id ? calls->second.find(*call_id) : calls->second.end();
      if (call != calls->second.end())
        lines.emplace_back(call->second, QPointF(kGutterWidth + viewport_.x_of(start_ns), area.top() + 2));
    };
    const auto& work = snapshot.streams[current.index];
    for (const auto& span : work.spans)
      link(span.call_id, span.start_ns);
    for (const auto& kernel : work.kernels)
      link(kernel.kernel.mpi_call_id, kernel.kernel.start_ns);
  }
  return lines;
}

std::vector<QLineF> TimelineCanvas::api_links() const {
  std::vector<QLineF> lines;
  if (!database_ || database_->cuda_api_threads.empty() || database_->gpu_streams.empty())
    return lines;
  const auto& snapshot = fetcher_.snapshot();
  // Per rank and correlation id: where each API call sits (x of its start, bottom of its box).
  std::unordered_map<int, std::unordered_map<std::int64_t, QPointF>> api_feet;
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const auto& current = rows_[row];
    const auto area = row_rect(row);
    if (current.kind != TimelineRowKind::CudaApi || area.height() <= 0 ||
        current.index >= snapshot.api_calls.size())
      continue;
    const auto& calls = snapshot.api_calls[current.index];
    const QRectF plot(kGutterWidth, area.top(), width() - kGutterWidth, area.height());
    const int levels = api_levels(calls);
    for (const auto& call : calls)
      api_feet[current.rank][call.correlation_id] = api_call_box(viewport_, plot, call, levels).bottomLeft();
  }
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const auto& current = rows_[row];
    const auto area = row_rect(row);
    const auto feet = api_feet.find(current.rank);
    if (current.kind != TimelineRowKind::Stream || area.height() <= 0 || feet == api_feet.end() ||
        current.index >= snapshot.streams.size())
      continue;
    // The first of the ids with a call in the window: a copy's runtime call before the driver call
    // it made, so a copy gets one line.
    const auto link = [&](std::initializer_list<std::optional<std::int64_t>> ids, std::int64_t start_ns) {
      for (const auto& id : ids)
        if (const auto call = id ? feet->second.find(*id) : feet->second.end(); call != feet->second.end()) {
          lines.emplace_back(call->second, QPointF(kGutterWidth + viewport_.x_of(start_ns), area.top() + 2));
          return;
        }
    };
    const auto& work = snapshot.streams[current.index];
    for (const auto& kernel : work.kernels)
      link({kernel.kernel.correlation_id}, kernel.kernel.start_ns);
    for (const auto& copy : work.copies)
      link({copy.runtime_correlation_id, copy.correlation_id}, copy.start_ns);
    for (const auto& memset : work.memsets)
      link({memset.correlation_id}, memset.start_ns);
  }
  return lines;
}

void TimelineCanvas::paint_kernel_links(QPainter& painter) const {
  const auto calls = kernel_links(), api_calls = api_links();
  if (calls.empty() && api_calls.empty())
    return;
  painter.save();
  painter.setClipRect(kGutterWidth, lanes_top(), width() - kGutterWidth, height() - lanes_top());
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(family_color(CallFamily::Nccl).darker(160), 1, Qt::DashLine));
  for (const auto& line : calls)
    painter.drawLine(line);
  painter.setPen(QPen(api_call_color().darker(160), 1, Qt::DashLine));
  for (const auto& line : api_calls)
    painter.drawLine(line);
  painter.restore();
}

QString TimelineCanvas::describe_api_gpu_work(int rank, const analysis::TimelineApiCall& call) const {
  const auto& snapshot = fetcher_.snapshot();
  for (std::size_t lane = 0; lane < database_->gpu_streams.size() && lane < snapshot.streams.size(); ++lane) {
    if (database_->gpu_streams[lane].rank != rank)
      continue;
    const auto where =
        QStringLiteral(" on %1").arg(stream_label(database_->gpu_streams[lane]).toHtmlEscaped());
    for (const auto& item : snapshot.streams[lane].kernels)
      if (item.kernel.correlation_id == call.correlation_id)
        return tr("<br>launched %1%2 (%3)")
            .arg(item.short_name.toHtmlEscaped(), where,
                 format_duration(item.kernel.end_ns - item.kernel.start_ns));
    for (const auto& copy : snapshot.streams[lane].copies)
      if (copy.correlation_id == call.correlation_id || copy.runtime_correlation_id == call.correlation_id)
        return tr("<br>copied %1%2 (%3)")
            .arg(format_bytes(static_cast<std::uint64_t>(copy.bytes)), where,
                 route_short_text(copy.route()).toHtmlEscaped());
    for (const auto& memset : snapshot.streams[lane].memsets)
      if (memset.correlation_id == call.correlation_id)
        return tr("<br>set %1%2").arg(format_bytes(static_cast<std::uint64_t>(memset.bytes)), where);
  }
  return {};
}

QString TimelineCanvas::describe_call_gpu_work(const SelectedCall& selected) const {
  QString text;
  QStringList listed;
  int launched = 0;
  for (std::size_t lane = 0; lane < database_->gpu_streams.size(); ++lane) {
    if (database_->gpu_streams[lane].rank != selected.lane.rank || lane >= fetcher_.snapshot().streams.size())
      continue;
    const auto& work = fetcher_.snapshot().streams[lane];
    for (const auto& span : work.spans)
      if (span.call_id == selected.call.id)
        text += tr("<br>on the GPU %1 (from CUDA events on its stream), %2 after the call began")
                    .arg(format_duration(span.end_ns - span.start_ns),
                         format_duration(span.start_ns - selected.call.start_ns));
    for (const auto& item : work.kernels)
      if (item.kernel.mpi_call_id == selected.call.id && ++launched <= kKernelsListed)
        listed << tr("%1 (%2 on GPU %3)")
                      .arg(item.short_name.toHtmlEscaped(),
                           format_duration(item.kernel.end_ns - item.kernel.start_ns))
                      .arg(item.kernel.device);
  }
  if (launched > kKernelsListed)
    listed << tr("%1 more").arg(launched - kKernelsListed);
  if (launched > 0)
    text += tr("<br>GPU kernels launched: %1").arg(listed.join(QStringLiteral(", ")));
  if (database_->has_nccl_calls)
    text += describe_nccl_call(*database_->database, selected.call.id);
  return text;
}

} // namespace commlens::viewer
