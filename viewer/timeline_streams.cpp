#include "timeline_streams.hpp"

#include "format.hpp"
#include "palette.hpp"

#include "commlens/analysis/kernel_names.hpp"

#include <QCoreApplication>
#include <QPainter>

#include <algorithm>

namespace commlens::viewer {
namespace {

constexpr int kSignatureShown = 300; // characters of a demangled kernel signature in its tooltip

QString tr(const char* text) {
  return QCoreApplication::translate("TimelineStreams", text);
}

QString device_text(std::optional<int> device) {
  return device ? QString::number(*device) : tr("host");
}

QString handle_text(std::int64_t handle) {
  return handle == 0 ? tr("0 (the default stream)") : QStringLiteral("0x%1").arg(handle, 0, 16);
}

// Where an item is drawn on `row`, at least a pixel wide, `inset` pixels inside the row's height.
template <typename Item>
QRectF box_of(const TimelineViewport& viewport, const QRectF& row, const Item& item, double inset) {
  const double x0 = viewport.x_of(item.start_ns), x1 = std::max(viewport.x_of(item.end_ns), x0 + 1);
  return {row.left() + x0, row.top() + inset, x1 - x0, row.height() - 2 * inset};
}

template <typename Item> bool visible(const TimelineViewport& viewport, const Item& item) {
  return viewport.x_of(item.end_ns) >= 0 && viewport.x_of(item.start_ns) <= viewport.width();
}

// The last item (the one drawn on top) within `slack_ns` of `time_ns`.
template <typename Item, typename Time>
const Item* item_at(const std::vector<Item>& items, std::int64_t time_ns, std::int64_t slack_ns, Time times) {
  const Item* found = nullptr;
  for (const auto& item : items) {
    const auto [start, end] = times(item);
    if (start - slack_ns <= time_ns && time_ns <= end + slack_ns)
      found = &item;
  }
  return found;
}

void label(QPainter& painter, const QRectF& box, const QString& text, const QColor& color,
           double minimum_width) {
  if (box.width() <= minimum_width)
    return;
  painter.setPen(color);
  painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                   painter.fontMetrics().elidedText(text, Qt::ElideRight, static_cast<int>(box.width() - 4)));
}

QString times_text(std::int64_t start_ns, std::int64_t end_ns, std::int64_t origin_ns) {
  return tr("start %1, duration %2")
      .arg(format_duration(start_ns - origin_ns), format_duration(end_ns - start_ns));
}

QString direction_text(const std::string& direction) {
  if (direction == "HtoD")
    return tr("host to device");
  if (direction == "DtoH")
    return tr("device to host");
  if (direction == "DtoD")
    return tr("device to device");
  if (direction == "PtoP")
    return tr("peer to peer");
  if (direction == "HtoH")
    return tr("host to host");
  return QString::fromStdString(direction);
}

QString describe_kernel(const StreamKernel& item, int rank, std::int64_t origin_ns) {
  const auto& kernel = item.kernel;
  auto signature = QString::fromStdString(analysis::demangled_kernel_name(kernel.name));
  if (signature.size() > kSignatureShown)
    signature = signature.left(kSignatureShown) + QStringLiteral("\u2026");
  return tr("<b>%1</b> &middot; %2 kernel<br>%3<br>rank %4, GPU %5, stream %6<br>%7<br>%8")
      .arg(item.short_name.toHtmlEscaped(), item.communication ? tr("communication") : tr("compute"),
           signature.toHtmlEscaped())
      .arg(rank)
      .arg(kernel.device)
      .arg(kernel.stream)
      .arg(times_text(kernel.start_ns, kernel.end_ns, origin_ns),
           kernel.mpi_call_id ? tr("launched in call id %1").arg(*kernel.mpi_call_id)
                              : tr("launched outside MPI and NCCL calls"));
}

QString describe_span(const analysis::TimelineDeviceSpan& span, int rank, const LoadedDatabase& database) {
  return tr("<b>%1</b> on the GPU &middot; call id %2 of rank %3<br>from the CUDA events recorded on its "
            "stream%4 before and after its work<br>%5")
      .arg(database.function_name(span.function_id))
      .arg(span.call_id)
      .arg(rank)
      .arg(span.nccl_stream ? tr(" (%1)").arg(handle_text(*span.nccl_stream)) : QString(),
           times_text(span.start_ns, span.end_ns, database.timeline.start_ns));
}

QString describe_memset(const analysis::TimelineMemset& memset, int rank, std::int64_t origin_ns) {
  return tr("<b>CUDA memset</b> of %1 %2 memory<br>rank %3, GPU %4, stream %5<br>%6")
      .arg(format_bytes(static_cast<std::uint64_t>(memset.bytes)), QString::fromStdString(memset.memory_kind))
      .arg(rank)
      .arg(memset.device)
      .arg(memset.stream)
      .arg(times_text(memset.start_ns, memset.end_ns, origin_ns));
}

QString synchronization_name(const std::string& kind) {
  if (kind == "stream_synchronize")
    return QStringLiteral("cudaStreamSynchronize");
  if (kind == "event_synchronize")
    return QStringLiteral("cudaEventSynchronize");
  if (kind == "stream_wait_event")
    return QStringLiteral("cudaStreamWaitEvent");
  if (kind == "context_synchronize")
    return QStringLiteral("cudaDeviceSynchronize");
  return QString::fromStdString(kind);
}

} // namespace

bool CopySelection::contains(const analysis::TimelineCopy& copy, int copy_rank) const {
  return copy_rank == rank && copy.device == device && copy.route() == route;
}

QString route_text(const analysis::CopyRoute& route) {
  QStringList parts = {QString::fromStdString(route.path)};
  if (route.link)
    parts.first() += QStringLiteral(" (%1)").arg(QString::fromStdString(*route.link));
  parts << direction_text(route.direction);
  if (!route.host_memory.empty())
    parts << QString::fromStdString(route.host_memory);
  return parts.join(QStringLiteral(", "));
}

QString route_short_text(const analysis::CopyRoute& route) {
  QStringList parts = {QString::fromStdString(route.path)};
  if (route.link)
    parts.first() += QStringLiteral(" (%1)").arg(QString::fromStdString(*route.link));
  parts << QString::fromStdString(route.direction);
  if (!route.host_memory.empty())
    parts << QString::fromStdString(route.host_memory);
  return parts.join(QLatin1Char(' '));
}

QString stream_label(const analysis::GpuStream& stream) {
  const auto gpu = stream.device ? QStringLiteral("GPU%1").arg(*stream.device) : QStringLiteral("GPU");
  if (stream.stream)
    return QStringLiteral("%1 s%2").arg(gpu).arg(*stream.stream);
  return stream.spans_without_stream ? tr("%1 spans").arg(gpu) : tr("%1 NCCL").arg(gpu);
}

QString describe_stream(const analysis::GpuStream& stream) {
  QStringList held;
  const auto count = [&](std::uint64_t n, const QString& what) {
    if (n > 0)
      held << QStringLiteral("%1 %2").arg(format_count(n), what);
  };
  count(stream.compute_kernels, tr("compute kernels"));
  count(stream.communication_kernels, tr("communication kernels"));
  count(stream.copies, tr("copies"));
  count(stream.memsets, tr("memsets"));
  count(stream.nccl_spans, tr("NCCL calls' GPU spans"));
  const auto which = stream.stream ? tr("stream %1 (CUPTI's id)").arg(*stream.stream)
                     : stream.nccl_stream
                         ? tr("the stream NCCL calls passed as %1; no kernel or copy recorded on it")
                               .arg(handle_text(*stream.nccl_stream))
                         : tr("calls' GPU spans without a recorded stream");
  return tr("<b>%1</b>: rank %2, %3%4<br>%5")
      .arg(stream_label(stream).toHtmlEscaped())
      .arg(stream.rank)
      .arg(which,
           stream.stream && stream.nccl_stream
               ? tr(", NCCL's stream %1").arg(handle_text(*stream.nccl_stream))
               : QString(),
           held.join(QStringLiteral(", ")));
}

void paint_stream(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const StreamWork& work, int rank, const LoadedDatabase& database,
                  const std::optional<CopySelection>& selection) {
  for (const auto& span : work.spans) {
    if (!visible(viewport, span))
      continue;
    const auto box = box_of(viewport, row, span, 1);
    painter.fillRect(box, device_span_color());
    painter.setPen(device_span_color().darker(150));
    painter.drawRect(box);
    label(painter, box, database.function_name(span.function_id), Qt::black, 60);
  }
  for (const auto& copy : work.copies) {
    if (!visible(viewport, copy))
      continue;
    const auto box = box_of(viewport, row, copy, 3);
    const bool chosen = !selection || selection->contains(copy, rank);
    painter.fillRect(box, chosen ? copy_path_color(copy.path) : QColor(225, 225, 225));
    label(painter, box, QString::fromStdString(copy.copy_kind), Qt::white, 40);
  }
  for (const auto& memset : work.memsets) {
    if (!visible(viewport, memset))
      continue;
    const auto box = box_of(viewport, row, memset, 3);
    painter.fillRect(box, memset_color());
    label(painter, box, tr("memset"), Qt::black, 50);
  }
  for (const auto& item : work.kernels) {
    if (!visible(viewport, item.kernel))
      continue;
    const auto box = box_of(viewport, row, item.kernel, 2);
    painter.fillRect(box, kernel_color(item.short_name, item.communication));
    label(painter, box, item.short_name, item.communication ? Qt::white : Qt::black, 50);
  }
}

void paint_synchronizations(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                            const std::vector<analysis::TimelineSynchronization>& waits) {
  for (const auto& wait : waits)
    if (visible(viewport, wait))
      painter.fillRect(box_of(viewport, row, wait, 1), synchronization_color());
}

QString describe_stream_at(const StreamWork& work, std::int64_t time_ns, std::int64_t slack_ns, int rank,
                           const LoadedDatabase& database) {
  const auto origin = database.timeline.start_ns;
  const auto times = [](const auto& item) { return std::pair{item.start_ns, item.end_ns}; };
  if (const auto* kernel = item_at(work.kernels, time_ns, slack_ns, [](const StreamKernel& item) {
        return std::pair{item.kernel.start_ns, item.kernel.end_ns};
      }))
    return describe_kernel(*kernel, rank, origin);
  if (const auto* copy = item_at(work.copies, time_ns, slack_ns, times))
    return describe_copy(*copy, rank, origin);
  if (const auto* memset = item_at(work.memsets, time_ns, slack_ns, times))
    return describe_memset(*memset, rank, origin);
  if (const auto* span = item_at(work.spans, time_ns, slack_ns, times))
    return describe_span(*span, rank, database);
  return {};
}

QString describe_synchronization_at(const std::vector<analysis::TimelineSynchronization>& waits,
                                    std::int64_t time_ns, std::int64_t slack_ns, int rank,
                                    std::int64_t origin_ns) {
  const auto* wait = item_at(waits, time_ns, slack_ns, [](const auto& item) {
    return std::pair{item.start_ns, item.end_ns};
  });
  if (!wait)
    return {};
  return tr("<b>%1</b> &middot; rank %2 waited for its GPU%3<br>%4<br>(synchronisation calls are recorded "
            "with kernels)")
      .arg(synchronization_name(wait->kind))
      .arg(rank)
      .arg(wait->stream ? tr(" (stream %1)").arg(*wait->stream) : QString(),
           times_text(wait->start_ns, wait->end_ns, origin_ns));
}

QString describe_copy(const analysis::TimelineCopy& copy, int rank, std::int64_t origin_ns) {
  const auto bandwidth = copy.gb_per_s();
  return tr("<b>CUDA copy</b> &middot; %1<br>rank %2, device %3: %4 &rarr; %5, stream %6<br>%7<br>%8 at %9 "
            "while copying<br>%10")
      .arg(route_text(copy.route()).toHtmlEscaped())
      .arg(rank)
      .arg(copy.device)
      .arg(device_text(copy.src_device), device_text(copy.dst_device))
      .arg(copy.stream)
      .arg(times_text(copy.start_ns, copy.end_ns, origin_ns),
           format_bytes(static_cast<std::uint64_t>(copy.bytes)),
           bandwidth ? format_rate(*bandwidth) : tr("an unknown rate"),
           copy.mpi_call_id ? tr("issued in MPI call id %1").arg(*copy.mpi_call_id)
                            : tr("outside MPI calls"));
}

} // namespace commlens::viewer
