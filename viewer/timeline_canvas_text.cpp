// The timeline canvas' words: what hovering or clicking a call, a merged bin, a copy, a kernel, a
// range or a phase shows. Kept apart from the painting and input handling in timeline_canvas.cpp.
#include "timeline_canvas.hpp"

#include "format.hpp"
#include "timeline_annotations.hpp"

#include <algorithm>

namespace commlens::viewer {

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
             .arg(call.id) +
         describe_runtime_decision(call) + describe_call_gpu_work(selected);
}

QString TimelineCanvas::describe_runtime_decision(const analysis::TimelineCall& call) const {
  if (!database_->has_runtime_ops)
    return {};
  const auto decision = analysis::query_runtime_decision(*database_->database, call.id);
  if (!decision)
    return {};
  const auto text = [](const std::optional<std::string>& value) {
    return value ? QString::fromStdString(*value).toHtmlEscaped() : QString();
  };
  auto line =
      tr("<br>GPU runtime: decision <b>%1</b>, algorithm %2")
          .arg(QString::fromStdString(decision->decision), QString::fromStdString(decision->algorithm));
  if (decision->decision_source)
    line += tr(", chosen by %1").arg(text(decision->decision_source));
  if (decision->reason)
    line += tr("<br>why: %1").arg(text(decision->reason));
  return line + tr("<br>%1 loaded from peers' GPU memory, %2 through host memory, %3 IPC handles opened")
                    .arg(format_bytes(static_cast<std::uint64_t>(decision->bytes_peer)),
                         format_bytes(static_cast<std::uint64_t>(decision->bytes_host)))
                    .arg(decision->ipc_opens);
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
  return describe_annotation_at(position);
}

std::vector<const analysis::TimelinePhase*> TimelineCanvas::phases_of(int rank) const {
  std::vector<const analysis::TimelinePhase*> phases;
  for (const auto& phase : database_->phases)
    if (phase.rank == rank)
      phases.push_back(&phase);
  return phases;
}

QString TimelineCanvas::describe_annotation_at(QPoint position) const {
  if (const auto chip = setup_chip(); chip && chip->contains(position))
    if (const auto setup = database_->phase_names.setup(database_->timeline.end_ns))
      return tr("<b>set-up</b>, before the first step: %1; click to show it")
          .arg(format_duration(setup->second - setup->first));
  if (const auto* phase = phase_in_band_at(position))
    return describe_phase_stats(*phase, database_->phase_names, database_->timeline.start_ns);
  const int row_index = row_at(position.y());
  if (row_index < 0)
    return {};
  const auto& row = rows_[static_cast<std::size_t>(row_index)];
  if (position.x() < kGutterWidth)
    return row.kind == TimelineRowKind::Stream    ? describe_stream(database_->gpu_streams[row.index])
           : row.kind == TimelineRowKind::CudaApi ? describe_api_lane(database_->cuda_api_threads[row.index])
                                                  : QString();
  const auto& snapshot = fetcher_.snapshot();
  const auto time = viewport_.time_at(position.x() - kGutterWidth);
  const auto slack = static_cast<std::int64_t>(kHitSlackPixels * viewport_.ns_per_pixel());
  const auto origin = database_->timeline.start_ns;
  switch (row.kind) {
  case TimelineRowKind::Stream:
    return row.index < snapshot.streams.size()
               ? describe_stream_at(snapshot.streams[row.index], time, slack, row.rank, *database_)
               : QString();
  case TimelineRowKind::CudaApi: {
    if (row.index >= snapshot.api_calls.size())
      return {};
    const auto& calls = snapshot.api_calls[row.index];
    const auto area = row_rect(static_cast<std::size_t>(row_index));
    const int level =
        std::clamp((position.y() - area.top()) * api_levels(calls) / area.height(), 0, kMaxApiLevels - 1);
    const auto* call = api_call_at(calls, time, slack, level);
    return call ? describe_api_call(*call, database_->cuda_api_threads[row.index], origin,
                                    describe_api_gpu_work(row.rank, *call))
                : QString();
  }
  case TimelineRowKind::Synchronizations:
    return row.index < snapshot.synchronizations.size()
               ? describe_synchronization_at(snapshot.synchronizations[row.index], time, slack, row.rank,
                                             origin)
               : QString();
  case TimelineRowKind::Calls:
    return {};
  case TimelineRowKind::Ranges:
    break;
  }
  if (row.index < snapshot.ranges.size()) {
    const auto& ranges = snapshot.ranges[row.index];
    const auto area = row_rect(static_cast<std::size_t>(row_index));
    const int level = std::clamp((position.y() - area.top()) * range_levels(ranges) / area.height(), 0,
                                 kMaxRangeLevels - 1);
    if (const auto* range = range_at(ranges, time, slack, level))
      return describe_range(*range, row.rank, origin);
  }
  const auto* phase = phase_at(phases_of(row.rank), time);
  return phase ? describe_phase(*phase, database_->phase_names, origin) : QString();
}

} // namespace commlens::viewer
