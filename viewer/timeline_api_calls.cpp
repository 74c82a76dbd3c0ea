#include "timeline_api_calls.hpp"

#include "format.hpp"
#include "palette.hpp"

#include <QCoreApplication>
#include <QPainter>

#include <algorithm>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("TimelineApiCalls", text);
}

int level_of(const analysis::TimelineApiCall& call) {
  return std::min(call.depth, kMaxApiLevels - 1);
}

QString thread_text(const analysis::CudaApiThread& thread) {
  return thread.thread ? tr("thread %1 (Linux thread %2)").arg(*thread.thread).arg(thread.system_thread)
                       : tr("Linux thread %1, which made no MPI or NCCL call").arg(thread.system_thread);
}

} // namespace

QString api_lane_label(const analysis::CudaApiThread& thread, bool several_on_rank) {
  if (!several_on_rank)
    return tr("  CUDA API");
  return thread.thread ? tr("  CUDA API t%1").arg(*thread.thread)
                       : tr("  CUDA API tid %1").arg(thread.system_thread);
}

QString describe_api_lane(const analysis::CudaApiThread& thread) {
  return tr("<b>CUDA API calls</b> of rank %1, %2: %3 calls that put work on a GPU or wait for it")
      .arg(thread.rank)
      .arg(thread_text(thread), format_count(thread.calls));
}

int api_levels(const std::vector<analysis::TimelineApiCall>& calls) {
  int levels = 1;
  for (const auto& call : calls)
    levels = std::max(levels, level_of(call) + 1);
  return levels;
}

QRectF api_call_box(const TimelineViewport& viewport, const QRectF& row,
                    const analysis::TimelineApiCall& call, int levels) {
  const double level_height = (row.height() - 2) / levels;
  const double x0 = viewport.x_of(call.start_ns), x1 = std::max(viewport.x_of(call.end_ns), x0 + 1);
  return {row.left() + x0, row.top() + 1 + level_of(call) * level_height, x1 - x0, level_height - 1};
}

void paint_api_calls(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                     const std::vector<analysis::TimelineApiCall>& calls) {
  const int levels = api_levels(calls);
  for (const auto& call : calls) {
    if (viewport.x_of(call.end_ns) < 0 || viewport.x_of(call.start_ns) > viewport.width())
      continue;
    const auto box = api_call_box(viewport, row, call, levels);
    painter.fillRect(box, api_call_color());
    if (box.width() > 40 && box.height() >= 11) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       painter.fontMetrics().elidedText(QString::fromStdString(call.name), Qt::ElideRight,
                                                        static_cast<int>(box.width() - 4)));
    }
  }
}

const analysis::TimelineApiCall* api_call_at(const std::vector<analysis::TimelineApiCall>& calls,
                                             std::int64_t time_ns, std::int64_t slack_ns, int level) {
  const analysis::TimelineApiCall* found = nullptr;
  for (const auto& call : calls)
    if (level_of(call) == level && call.start_ns - slack_ns <= time_ns && time_ns <= call.end_ns + slack_ns)
      found = &call;
  return found;
}

QString describe_api_call(const analysis::TimelineApiCall& call, const analysis::CudaApiThread& thread,
                          std::int64_t origin_ns, const QString& gpu_work) {
  return tr("<b>%1</b> &middot; CUDA API call<br>rank %2, %3<br>start %4, duration %5<br>correlation id %6%7")
      .arg(QString::fromStdString(call.name).toHtmlEscaped())
      .arg(thread.rank)
      .arg(thread_text(thread), format_duration(call.start_ns - origin_ns),
           format_duration(call.end_ns - call.start_ns))
      .arg(call.correlation_id)
      .arg(gpu_work);
}

} // namespace commlens::viewer
