#pragma once
// What every view calls a phase, the same on the timeline's band, its rank rows and the Steps
// view: in a run with training steps, "set-up" (phase 0), "step N" (the N-th step, as the Steps
// view and the report count them), "between steps" (level 3 phases, the time between NVTX step
// ranges) and "tear-down" (after the last step); elsewhere "phase N". Also where the timeline
// opens: on the steady steps, after the warm-up.
#include "commlens/analysis/timeline.hpp"
#include "commlens/analysis/training_steps.hpp"

#include <QString>

#include <map>
#include <optional>
#include <utility>

namespace commlens::viewer {

class PhaseNames {
public:
  // Steps shown when the timeline opens: enough to compare neighbours, few enough to read each.
  static constexpr int kOpeningSteps = 8;

  PhaseNames() = default;
  PhaseNames(const std::vector<analysis::TimelinePhase>& phases, const analysis::TrainingSteps& steps);

  QString name(int phase) const;
  // 1 for the first training step; empty for a phase that is no step.
  std::optional<int> step_number(int phase) const;
  bool has_steps() const { return !step_numbers_.empty(); }
  // The earliest start and latest end of `phase` over the ranks; a phase left open ends at
  // `trace_end_ns`. Empty for a phase no rank has.
  std::optional<std::pair<std::int64_t, std::int64_t>> span(int phase, std::int64_t trace_end_ns) const;
  // The span of the set-up phase, in a run with steps.
  std::optional<std::pair<std::int64_t, std::int64_t>> setup(std::int64_t trace_end_ns) const;
  // From the first step after the warm-up through at most kOpeningSteps steps; empty without steps.
  std::optional<std::pair<std::int64_t, std::int64_t>> opening_window(std::int64_t trace_end_ns) const;

private:
  std::vector<analysis::TimelinePhase> phases_;
  std::map<int, int> step_numbers_; // phase -> step number
  std::vector<int> step_phases_;    // in order
  int warmup_steps_ = 0;
};

} // namespace commlens::viewer
