#include "timeline_annotations.hpp"

#include "format.hpp"

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

} // namespace

void paint_phases(QPainter& painter, const TimelineViewport& viewport, const QRectF& band,
                  const std::vector<analysis::PhaseStats>& phases, const PhaseNames& names,
                  std::int64_t trace_end_ns) {
  for (const auto& phase : phases) {
    const double x0 = std::max(0.0, viewport.x_of(phase.start_ns));
    const double x1 = std::min(double(viewport.width()), viewport.x_of(phase.end_ns.value_or(trace_end_ns)));
    if (x1 <= x0)
      continue;
    const QRectF box(band.left() + x0, band.top() + 1, x1 - x0, band.height() - 2);
    const bool step = names.step_number(phase.phase).has_value();
    painter.fillRect(box, step ? (phase.phase % 2 ? QColor(200, 225, 200) : QColor(225, 240, 215))
                               : (phase.phase % 2 ? QColor(255, 236, 200) : QColor(215, 232, 255)));
    painter.setPen(QColor(255, 255, 255));
    painter.drawLine(box.topLeft(), box.bottomLeft());
    if (box.width() > 40) {
      painter.setPen(Qt::black);
      painter.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, names.name(phase.phase));
    }
  }
}

void paint_ranges(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const std::vector<analysis::TimelineRange>& ranges,
                  const std::vector<const analysis::TimelinePhase*>& phases, const PhaseNames& names,
                  std::int64_t trace_end_ns) {
  for (const auto* phase : phases) {
    const double x0 = std::max(0.0, viewport.x_of(phase->start_ns));
    const double x1 = std::min(double(viewport.width()), viewport.x_of(phase->end_ns.value_or(trace_end_ns)));
    if (x1 <= x0)
      continue;
    const QRectF band(row.left() + x0, row.top() + 1, x1 - x0, row.height() - 2);
    painter.fillRect(band, phase->phase % 2 ? QColor(255, 236, 200) : QColor(215, 232, 255));
    painter.setPen(Qt::darkGray);
    painter.drawText(band.adjusted(2, 0, -2, 0), Qt::AlignRight | Qt::AlignBottom, names.name(phase->phase));
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

QString describe_range(const analysis::TimelineRange& range, int rank, std::int64_t origin_ns) {
  return tr("<b>%1</b> &middot; NVTX range, domain %2<br>rank %3, nesting depth %4<br>start %5, duration %6")
      .arg(QString::fromStdString(range.name).toHtmlEscaped(),
           range.domain ? QString::fromStdString(*range.domain).toHtmlEscaped() : tr("default"))
      .arg(rank)
      .arg(range.depth)
      .arg(format_duration(range.start_ns - origin_ns), format_duration(range.end_ns - range.start_ns));
}

QString describe_phase_stats(const analysis::PhaseStats& phase, const PhaseNames& names,
                             std::int64_t origin_ns) {
  QStringList top;
  for (const auto& name : phase.top_functions)
    top << QString::fromStdString(name);
  return tr("<b>%1</b> (phase %2) on %3 ranks<br>start %4, %5<br>%6 calls, %7, %8 in MPI and NCCL calls "
            "(summed over ranks)<br>most time in %9<br>double-click to show it all")
      .arg(names.name(phase.phase))
      .arg(phase.phase)
      .arg(phase.ranks)
      .arg(format_duration(phase.start_ns - origin_ns),
           phase.end_ns ? tr("duration %1").arg(format_duration(*phase.end_ns - phase.start_ns))
                        : tr("still open at the end of the trace"),
           format_count(phase.calls), format_bytes(phase.bytes), format_duration(phase.time_total_ns),
           top.isEmpty() ? tr("no function") : top.join(QStringLiteral(", ")));
}

QString describe_phase(const analysis::TimelinePhase& phase, const PhaseNames& names,
                       std::int64_t origin_ns) {
  return tr("<b>%1</b> of rank %2 (phase %3)<br>start %4, %5")
      .arg(names.name(phase.phase))
      .arg(phase.rank)
      .arg(phase.phase)
      .arg(format_duration(phase.start_ns - origin_ns),
           phase.end_ns ? tr("duration %1").arg(format_duration(*phase.end_ns - phase.start_ns))
                        : tr("still open at the end of the trace"));
}

} // namespace commlens::viewer
