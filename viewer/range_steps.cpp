#include "range_steps.hpp"

#include <algorithm>

namespace commlens::viewer {

QString step_part_name(StepPart part) {
  switch (part) {
  case StepPart::Forward:
    return QStringLiteral("forward");
  case StepPart::Backward:
    return QStringLiteral("backward");
  case StepPart::Communication:
    return QStringLiteral("communication");
  case StepPart::Optimizer:
    return QStringLiteral("optimizer");
  case StepPart::Other:
    return QStringLiteral("other");
  }
  return {};
}

StepPart step_part_of(const std::string& range_name) {
  if (range_name == "forward")
    return StepPart::Forward;
  if (range_name == "backward")
    return StepPart::Backward;
  if (range_name == "allreduce" || range_name == "communication")
    return StepPart::Communication;
  if (range_name == "optimizer")
    return StepPart::Optimizer;
  return StepPart::Other;
}

namespace {

constexpr const char* kStepRange = "step";

// One rank's steps: per step its duration and the time of each part (Other: the rest).
std::vector<std::array<double, kStepParts + 1>>
rank_steps(const std::vector<analysis::TimelineRange>& ranges) {
  constexpr std::size_t kDuration = kStepParts;
  std::vector<std::array<double, kStepParts + 1>> steps;
  for (std::size_t index = 0; index < ranges.size(); ++index) {
    const auto& step = ranges[index];
    if (step.name != kStepRange)
      continue;
    std::array<double, kStepParts + 1> figures{};
    figures[kDuration] = static_cast<double>(step.end_ns - step.start_ns);
    double parts = 0;
    // Ranges are by start: the step's children follow it until one starts after its end. Only
    // direct children count, so a part nested in another part is not counted twice.
    for (std::size_t child = index + 1; child < ranges.size() && ranges[child].start_ns < step.end_ns;
         ++child) {
      const auto& range = ranges[child];
      const auto part = step_part_of(range.name);
      if (range.depth != step.depth + 1 || part == StepPart::Other || range.end_ns > step.end_ns)
        continue;
      const auto length = static_cast<double>(range.end_ns - range.start_ns);
      figures[static_cast<std::size_t>(part)] += length;
      parts += length;
    }
    figures[static_cast<std::size_t>(StepPart::Other)] = std::max(0.0, figures[kDuration] - parts);
    steps.push_back(figures);
  }
  return steps;
}

} // namespace

std::vector<RangeStep>
steps_from_ranges(const std::map<int, std::vector<analysis::TimelineRange>>& ranges_by_rank) {
  std::vector<RangeStep> steps;
  for (const auto& [rank, ranges] : ranges_by_rank) {
    const auto figures = rank_steps(ranges);
    if (steps.size() < figures.size())
      steps.resize(figures.size());
    for (std::size_t index = 0; index < figures.size(); ++index) {
      auto& step = steps[index];
      ++step.ranks;
      step.duration_ns += figures[index][kStepParts];
      for (std::size_t part = 0; part < kStepParts; ++part)
        step.part_ns[part] += figures[index][part];
    }
  }
  for (int number = 1; auto& step : steps) {
    step.number = number++;
    step.duration_ns /= step.ranks;
    for (auto& part : step.part_ns)
      part /= step.ranks;
  }
  return steps;
}

} // namespace commlens::viewer
