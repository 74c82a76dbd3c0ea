#pragma once
// The rows above a rank's calls on the timeline: its NVTX ranges stacked by nesting over its
// phases, and the band of phases across ranks under the ruler, named as the Steps view names them
// (phase_names.hpp). Painting, hit-testing and the tooltip text of each item; the canvas decides
// where the rows go. The GPU rows beneath the calls are timeline_streams.hpp's.
#include "phase_names.hpp"
#include "timeline_viewport.hpp"

#include "commlens/analysis/report.hpp"
#include "commlens/analysis/timeline.hpp"

#include <QColor>
#include <QRectF>
#include <QString>

class QPainter;

namespace commlens::viewer {

// Nesting levels drawn one above the other; deeper ranges share the last level.
inline constexpr int kMaxRangeLevels = 3;

// The band of phases across ranks; a phase left open ends at `trace_end_ns`.
void paint_phases(QPainter& painter, const TimelineViewport& viewport, const QRectF& band,
                  const std::vector<analysis::PhaseStats>& phases, const PhaseNames& names,
                  std::int64_t trace_end_ns);
// `phases`: the rank's phases; a phase left open ends at `trace_end_ns`.
void paint_ranges(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const std::vector<analysis::TimelineRange>& ranges,
                  const std::vector<const analysis::TimelinePhase*>& phases, const PhaseNames& names,
                  std::int64_t trace_end_ns);

// The item under time `time_ns` (within `slack_ns`); for ranges, on nesting level `level`. The last
// match wins, so the range drawn on top is the one picked.
const analysis::TimelineRange* range_at(const std::vector<analysis::TimelineRange>& ranges,
                                        std::int64_t time_ns, std::int64_t slack_ns, int level);
const analysis::TimelinePhase* phase_at(const std::vector<const analysis::TimelinePhase*>& phases,
                                        std::int64_t time_ns);
// Levels the ranges occupy (1 to kMaxRangeLevels).
int range_levels(const std::vector<analysis::TimelineRange>& ranges);

// Tooltip and details text; times are shown from `origin_ns` (the trace start).
QString describe_range(const analysis::TimelineRange& range, int rank, std::int64_t origin_ns);
QString describe_phase_stats(const analysis::PhaseStats& phase, const PhaseNames& names,
                             std::int64_t origin_ns);
QString describe_phase(const analysis::TimelinePhase& phase, const PhaseNames& names, std::int64_t origin_ns);

} // namespace commlens::viewer
