#pragma once
// The rows around a rank's calls on the timeline: its CUDA copies coloured by path and its kernels
// coloured by name (beneath), its
// NVTX ranges stacked by nesting over its MPI_Pcontrol phases (above). Painting, hit-testing and
// the tooltip text of each item; the canvas decides where the rows go.
#include "timeline_viewport.hpp"

#include "commlens/analysis/breakdowns.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/timeline.hpp"

#include <QColor>
#include <QRectF>
#include <QString>

class QPainter;

namespace commlens::viewer {

// Nesting levels drawn one above the other; deeper ranges share the last level.
inline constexpr int kMaxRangeLevels = 3;

QColor copy_path_color(const std::string& path);

// The copies of one path (and link) by one rank on one GPU: a row of the copy paths tab.
struct CopySelection {
  std::string path;
  std::optional<std::string> link;
  int rank = 0;
  int device = 0;
  bool contains(const analysis::TimelineCopy& copy, int copy_rank) const;
};

// With a `selection`, copies outside it are greyed so the chosen ones stand out.
void paint_copies(QPainter& painter, const TimelineViewport& viewport, const QRectF& row, int rank,
                  const std::vector<analysis::TimelineCopy>& copies,
                  const std::optional<CopySelection>& selection);
void paint_kernels(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                   const std::vector<analysis::TimelineKernel>& kernels);
// The band of phases across ranks (MPI_Pcontrol), training steps named as such; a phase left open
// ends at `trace_end_ns`.
void paint_phases(QPainter& painter, const TimelineViewport& viewport, const QRectF& band,
                  const std::vector<analysis::PhaseStats>& phases, const analysis::TrainingSteps& steps,
                  std::int64_t trace_end_ns);
// `phases`: the rank's phases; a phase left open ends at `trace_end_ns`.
void paint_ranges(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const std::vector<analysis::TimelineRange>& ranges,
                  const std::vector<const analysis::TimelinePhase*>& phases, std::int64_t trace_end_ns);

// The item under time `time_ns` (within `slack_ns`); for ranges, on nesting level `level`. The last
// match wins, so the copy or range drawn on top is the one picked.
const analysis::TimelineCopy* copy_at(const std::vector<analysis::TimelineCopy>& copies, std::int64_t time_ns,
                                      std::int64_t slack_ns);
const analysis::TimelineKernel* kernel_at(const std::vector<analysis::TimelineKernel>& kernels,
                                          std::int64_t time_ns, std::int64_t slack_ns);
const analysis::TimelineRange* range_at(const std::vector<analysis::TimelineRange>& ranges,
                                        std::int64_t time_ns, std::int64_t slack_ns, int level);
const analysis::TimelinePhase* phase_at(const std::vector<const analysis::TimelinePhase*>& phases,
                                        std::int64_t time_ns);
// Levels the ranges occupy (1 to kMaxRangeLevels).
int range_levels(const std::vector<analysis::TimelineRange>& ranges);

// Tooltip and details text; times are shown from `origin_ns` (the trace start).
QString describe_copy(const analysis::TimelineCopy& copy, int rank, std::int64_t origin_ns);
QString describe_kernel(const analysis::TimelineKernel& kernel, int rank, std::int64_t origin_ns);
QString describe_range(const analysis::TimelineRange& range, int rank, std::int64_t origin_ns);
QString describe_phase_stats(const analysis::PhaseStats& phase, const analysis::TrainingSteps& steps,
                             std::int64_t origin_ns);
QString describe_phase(const analysis::TimelinePhase& phase, std::int64_t origin_ns);

} // namespace commlens::viewer
