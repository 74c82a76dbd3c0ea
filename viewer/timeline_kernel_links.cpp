// The timeline canvas' GPU work per call: the dashed lines from a call (an NCCL call, or an MPI call
// the GPU runtime ran) down to the kernels it launched on the rank's kernel row, and the tooltip
// lines that list those kernels and, when the file has the nccl_calls side table, what NCCL said
// about the call. Kernels belong to a call through cuda_kernels.mpi_call_id.
#include "timeline_canvas.hpp"

#include "format.hpp"
#include "function_colors.hpp"
#include "nccl_call_details.hpp"

#include <QPainter>

#include <algorithm>
#include <unordered_map>

namespace commlens::viewer {
namespace {

constexpr int kKernelsListed = 3; // in a call's tooltip; the rest are counted

} // namespace

std::vector<QLineF> TimelineCanvas::kernel_links() const {
  std::vector<QLineF> lines;
  if (!database_ || !database_->has_kernels)
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
    if (current.kind != TimelineRowKind::Kernels || area.height() <= 0 || calls == call_feet.end() ||
        current.index >= snapshot.kernels.size())
      continue;
    for (const auto& kernel : snapshot.kernels[current.index]) {
      const auto call = kernel.mpi_call_id ? calls->second.find(*kernel.mpi_call_id) : calls->second.end();
      if (call != calls->second.end())
        lines.emplace_back(call->second,
                           QPointF(kGutterWidth + viewport_.x_of(kernel.start_ns), area.top() + 2));
    }
  }
  return lines;
}

void TimelineCanvas::paint_kernel_links(QPainter& painter) const {
  const auto lines = kernel_links();
  if (lines.empty())
    return;
  painter.save();
  painter.setClipRect(kGutterWidth, kRulerHeight, width() - kGutterWidth, height() - kRulerHeight);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(function_color(QStringLiteral("nccl:")).darker(160), 1, Qt::DashLine));
  for (const auto& line : lines)
    painter.drawLine(line);
  painter.restore();
}

QString TimelineCanvas::describe_call_gpu_work(const SelectedCall& selected) const {
  QString text;
  const auto& kernels = fetcher_.snapshot().kernels;
  const auto ranks = ranks_of(database_->timeline);
  const auto rank_index = std::find(ranks.begin(), ranks.end(), selected.lane.rank) - ranks.begin();
  if (rank_index < static_cast<std::ptrdiff_t>(kernels.size())) {
    QStringList listed;
    int launched = 0;
    for (const auto& kernel : kernels[static_cast<std::size_t>(rank_index)])
      if (kernel.mpi_call_id == selected.call.id && ++launched <= kKernelsListed)
        listed << tr("%1 (%2 on GPU %3)")
                      .arg(QString::fromStdString(kernel.name).toHtmlEscaped(),
                           format_duration(kernel.end_ns - kernel.start_ns))
                      .arg(kernel.device);
    if (launched > kKernelsListed)
      listed << tr("%1 more").arg(launched - kKernelsListed);
    if (launched > 0)
      text += tr("<br>GPU kernels launched: %1").arg(listed.join(QStringLiteral(", ")));
  }
  if (database_->has_nccl_calls)
    text += describe_nccl_call(*database_->database, selected.call.id);
  return text;
}

} // namespace commlens::viewer
