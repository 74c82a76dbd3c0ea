#pragma once
// Training steps as the application's NVTX ranges mark them (examples/dl's trainer): one `step`
// range per step and, nested right inside it, `forward`, `backward`, `allreduce` (the gradient
// exchange: communication) and `optimizer`. The n-th step range of every rank is step n; its parts
// are means over the ranks that have it, and what the parts leave of the step is "other".
#include "commlens/analysis/timeline.hpp"

#include <QString>

#include <array>
#include <map>
#include <vector>

namespace commlens::viewer {

enum class StepPart { Forward, Backward, Communication, Optimizer, Other };
inline constexpr std::size_t kStepParts = 5;

// "forward", "backward", "communication", "optimizer", "other".
QString step_part_name(StepPart part);
// The part a range name stands for; Other for names that are no part ("step", "zero_grad").
StepPart step_part_of(const std::string& range_name);

struct RangeStep {
  int number = 0;                           // 1, 2, ... in the order the ranks ran them
  int ranks = 0;                            // ranks that have this step
  double duration_ns = 0;                   // mean over those ranks
  std::array<double, kStepParts> part_ns{}; // mean over those ranks; Other is the rest of the step
  double part(StepPart which) const { return part_ns[static_cast<std::size_t>(which)]; }
};

// `ranges_by_rank`: each rank's NVTX ranges, ascending start, with their nesting depth (as
// query_timeline_ranges gives them). Empty when no rank has a range named `step`.
std::vector<RangeStep>
steps_from_ranges(const std::map<int, std::vector<analysis::TimelineRange>>& ranges_by_rank);

} // namespace commlens::viewer
