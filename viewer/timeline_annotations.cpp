#include "timeline_annotations.hpp"

#include "format.hpp"
#include "function_colors.hpp"

#include <QCoreApplication>
#include <QPainter>

#include <algorithm>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("TimelineAnnotations", text);
}

int level_of(const analysis::TimelineRange& range) {
  return std::min(range.depth, kMaxRangeLevels - 1);
}

bool is_step(const analysis::TrainingSteps& steps, int phase) {
  return std::any_of(steps.steps.begin(), steps.steps.end(),
                     [&](const auto& step) { return step.phase == phase; });
}

QString phase_name(const analysis::TrainingSteps& steps, int phase) {
  return is_step(steps, phase) ? tr("step %1").arg(phase) : tr("phase %1").arg(phase);
}

QString device_text(std::optional<int> device) {
  return device ? QString::number(*device) : tr("host");
}

} // namespace

QColor copy_path_color(const std::string& path) {
  // Fixed colours per path (docs/schema.md lists them), so a run reads the same every time: staged
  // copies (the slow path to spot) in red, direct device-to-device paths in greens and blues.
  static const std::vector<std::pair<std::string, QColor>> kColors = {
      {"host_staged", QColor(220, 70, 60)}, {"peer", QColor(40, 160, 90)},
      {"ipc", QColor(40, 120, 200)},        {"same_device", QColor(150, 110, 200)},
      {"managed", QColor(230, 160, 30)},    {"host_to_host", QColor(140, 140, 140)},
  };
  for (const auto& [name, color] : kColors)
    if (name == path)
      return color;
  return QColor(90, 90, 90);
}

bool CopySelection::contains(const analysis::TimelineCopy& copy, int copy_rank) const {
  return copy_rank == rank && copy.device == device && copy.path == path && copy.link == link;
}

void paint_copies(QPainter& painter, const TimelineViewport& viewport, const QRectF& row, int rank,
                  const std::vector<analysis::TimelineCopy>& copies,
                  const std::optional<CopySelection>& selection) {
  for (const auto& copy : copies) {
    const double x0 = viewport.x_of(copy.start_ns), x1 = std::max(viewport.x_of(copy.end_ns), x0 + 1);
    if (x1 < 0 || x0 > viewport.width())
      continue;
    const QRectF box(row.left() + x0, row.top() + 2, x1 - x0, row.height() - 4);
    const bool chosen = !selection || selection->contains(copy, rank);
    painter.fillRect(box, chosen ? copy_path_color(copy.path) : QColor(225, 225, 225));
    if (box.width() > 50) {
      painter.setPen(Qt::white);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       QString::fromStdString(copy.path));
    }
  }
}

QColor kernel_color(const std::string& name) {
  const auto text = QString::fromStdString(name);
  // NCCL's kernels in the colour family of the NCCL calls that launch them.
  return is_nccl(text) ? function_color(text)
                       : QColor::fromHsv(static_cast<int>(qHash(text) % 360U), 90, 200);
}

void paint_kernels(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                   const std::vector<analysis::TimelineKernel>& kernels) {
  for (const auto& kernel : kernels) {
    const double x0 = viewport.x_of(kernel.start_ns), x1 = std::max(viewport.x_of(kernel.end_ns), x0 + 1);
    if (x1 < 0 || x0 > viewport.width())
      continue;
    const QRectF box(row.left() + x0, row.top() + 2, x1 - x0, row.height() - 4);
    painter.fillRect(box, kernel_color(kernel.name));
    if (box.width() > 50) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       QString::fromStdString(kernel.name));
    }
  }
}

void paint_phases(QPainter& painter, const TimelineViewport& viewport, const QRectF& band,
                  const std::vector<analysis::PhaseStats>& phases, const analysis::TrainingSteps& steps,
                  std::int64_t trace_end_ns) {
  for (const auto& phase : phases) {
    const double x0 = std::max(0.0, viewport.x_of(phase.start_ns));
    const double x1 = std::min(double(viewport.width()), viewport.x_of(phase.end_ns.value_or(trace_end_ns)));
    if (x1 <= x0)
      continue;
    const QRectF box(band.left() + x0, band.top() + 1, x1 - x0, band.height() - 2);
    const bool step = is_step(steps, phase.phase);
    painter.fillRect(box, step ? (phase.phase % 2 ? QColor(200, 225, 200) : QColor(225, 240, 215))
                               : (phase.phase % 2 ? QColor(255, 236, 200) : QColor(215, 232, 255)));
    painter.setPen(QColor(255, 255, 255));
    painter.drawLine(box.topLeft(), box.bottomLeft());
    if (box.width() > 40) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       phase_name(steps, phase.phase));
    }
  }
}

void paint_ranges(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const std::vector<analysis::TimelineRange>& ranges,
                  const std::vector<const analysis::TimelinePhase*>& phases, std::int64_t trace_end_ns) {
  for (const auto* phase : phases) {
    const double x0 = std::max(0.0, viewport.x_of(phase->start_ns));
    const double x1 = std::min(double(viewport.width()), viewport.x_of(phase->end_ns.value_or(trace_end_ns)));
    if (x1 <= x0)
      continue;
    const QRectF band(row.left() + x0, row.top() + 1, x1 - x0, row.height() - 2);
    painter.fillRect(band, phase->phase % 2 ? QColor(255, 236, 200) : QColor(215, 232, 255));
    painter.setPen(Qt::darkGray);
    painter.drawText(band.adjusted(2, 0, -2, 0), Qt::AlignRight | Qt::AlignBottom,
                     tr("phase %1").arg(phase->phase));
  }
  const double level_height = (row.height() - 2) / range_levels(ranges);
  for (const auto& range : ranges) {
    const double x0 = viewport.x_of(range.start_ns), x1 = std::max(viewport.x_of(range.end_ns), x0 + 1);
    if (x1 < 0 || x0 > viewport.width())
      continue;
    const QRectF box(row.left() + x0, row.top() + 1 + level_of(range) * level_height, x1 - x0,
                     level_height - 1);
    painter.fillRect(
        box, QColor::fromHsv(static_cast<int>(qHash(QString::fromStdString(range.name)) % 360U), 70, 235));
    painter.setPen(QColor(80, 80, 80));
    painter.drawRect(box);
    if (box.width() > 30 && box.height() >= 11) { // a name squeezed into a lower level is unreadable
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       QString::fromStdString(range.name));
    }
  }
}

const analysis::TimelineCopy* copy_at(const std::vector<analysis::TimelineCopy>& copies, std::int64_t time_ns,
                                      std::int64_t slack_ns) {
  const analysis::TimelineCopy* found = nullptr;
  for (const auto& copy : copies)
    if (copy.start_ns - slack_ns <= time_ns && time_ns <= copy.end_ns + slack_ns)
      found = &copy;
  return found;
}

const analysis::TimelineKernel* kernel_at(const std::vector<analysis::TimelineKernel>& kernels,
                                          std::int64_t time_ns, std::int64_t slack_ns) {
  const analysis::TimelineKernel* found = nullptr;
  for (const auto& kernel : kernels)
    if (kernel.start_ns - slack_ns <= time_ns && time_ns <= kernel.end_ns + slack_ns)
      found = &kernel;
  return found;
}

const analysis::TimelineRange* range_at(const std::vector<analysis::TimelineRange>& ranges,
                                        std::int64_t time_ns, std::int64_t slack_ns, int level) {
  const analysis::TimelineRange* found = nullptr;
  for (const auto& range : ranges)
    if (level_of(range) == level && range.start_ns - slack_ns <= time_ns &&
        time_ns <= range.end_ns + slack_ns)
      found = &range;
  return found;
}

const analysis::TimelinePhase* phase_at(const std::vector<const analysis::TimelinePhase*>& phases,
                                        std::int64_t time_ns) {
  for (const auto* phase : phases)
    if (phase->start_ns <= time_ns && (!phase->end_ns || time_ns < *phase->end_ns))
      return phase;
  return nullptr;
}

int range_levels(const std::vector<analysis::TimelineRange>& ranges) {
  int levels = 1;
  for (const auto& range : ranges)
    levels = std::max(levels, level_of(range) + 1);
  return levels;
}

QString describe_copy(const analysis::TimelineCopy& copy, int rank, std::int64_t origin_ns) {
  const auto bandwidth = copy.gb_per_s();
  return tr("<b>CUDA copy</b> %1 &middot; path <b>%2</b>%3<br>rank %4, device %5: %6 &rarr; %7<br>"
            "start %8, duration %9<br>%10 at %11<br>%12")
      .arg(QString::fromStdString(copy.copy_kind), QString::fromStdString(copy.path),
           copy.link ? tr(" over %1").arg(QString::fromStdString(*copy.link)) : QString())
      .arg(rank)
      .arg(copy.device)
      .arg(device_text(copy.src_device), device_text(copy.dst_device),
           format_duration(copy.start_ns - origin_ns), format_duration(copy.end_ns - copy.start_ns),
           format_bytes(static_cast<std::uint64_t>(copy.bytes)),
           bandwidth ? tr("%1 GB/s").arg(*bandwidth, 0, 'f', 2) : tr("unknown bandwidth"),
           copy.mpi_call_id ? tr("issued in MPI call id %1").arg(*copy.mpi_call_id)
                            : tr("outside MPI calls"));
}

QString describe_kernel(const analysis::TimelineKernel& kernel, int rank, std::int64_t origin_ns) {
  return tr("<b>CUDA kernel</b> %1<br>rank %2, device %3, stream %4<br>start %5, duration %6<br>%7")
      .arg(QString::fromStdString(kernel.name).toHtmlEscaped())
      .arg(rank)
      .arg(kernel.device)
      .arg(kernel.stream)
      .arg(format_duration(kernel.start_ns - origin_ns), format_duration(kernel.end_ns - kernel.start_ns),
           kernel.mpi_call_id ? tr("launched in MPI call id %1").arg(*kernel.mpi_call_id)
                              : tr("launched outside MPI calls"));
}

QString describe_range(const analysis::TimelineRange& range, int rank, std::int64_t origin_ns) {
  return tr("<b>%1</b> &middot; NVTX range, domain %2<br>rank %3, nesting depth %4<br>start %5, duration %6")
      .arg(QString::fromStdString(range.name).toHtmlEscaped(),
           range.domain ? QString::fromStdString(*range.domain).toHtmlEscaped() : tr("default"))
      .arg(rank)
      .arg(range.depth)
      .arg(format_duration(range.start_ns - origin_ns), format_duration(range.end_ns - range.start_ns));
}

QString describe_phase_stats(const analysis::PhaseStats& phase, const analysis::TrainingSteps& steps,
                             std::int64_t origin_ns) {
  QStringList top;
  for (const auto& name : phase.top_functions)
    top << QString::fromStdString(name);
  return tr("<b>%1</b> (MPI_Pcontrol phase %2) on %3 ranks<br>start %4, %5<br>%6 calls, %7, %8 in MPI "
            "(summed over ranks)<br>most time in %9")
      .arg(phase_name(steps, phase.phase))
      .arg(phase.phase)
      .arg(phase.ranks)
      .arg(format_duration(phase.start_ns - origin_ns),
           phase.end_ns ? tr("duration %1").arg(format_duration(*phase.end_ns - phase.start_ns))
                        : tr("still open at the end of the trace"),
           format_count(phase.calls), format_bytes(phase.bytes), format_duration(phase.time_total_ns),
           top.isEmpty() ? tr("no function") : top.join(QStringLiteral(", ")));
}

QString describe_phase(const analysis::TimelinePhase& phase, std::int64_t origin_ns) {
  return tr("<b>phase %1</b> of rank %2 (MPI_Pcontrol)<br>start %3, %4")
      .arg(phase.phase)
      .arg(phase.rank)
      .arg(format_duration(phase.start_ns - origin_ns),
           phase.end_ns ? tr("duration %1").arg(format_duration(*phase.end_ns - phase.start_ns))
                        : tr("still open at the end of the trace"));
}

} // namespace commlens::viewer
