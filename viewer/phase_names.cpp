#include "phase_names.hpp"

#include <QCoreApplication>

#include <algorithm>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("PhaseNames", text);
}

} // namespace

PhaseNames::PhaseNames(const std::vector<analysis::TimelinePhase>& phases,
                       const analysis::TrainingSteps& steps)
    : phases_(phases), warmup_steps_(steps.warmup_steps) {
  for (const auto& step : steps.steps) {
    step_phases_.push_back(step.phase);
    step_numbers_[step.phase] = static_cast<int>(step_phases_.size());
  }
}

std::optional<int> PhaseNames::step_number(int phase) const {
  const auto found = step_numbers_.find(phase);
  return found == step_numbers_.end() ? std::nullopt : std::optional<int>(found->second);
}

QString PhaseNames::name(int phase) const {
  if (const auto step = step_number(phase))
    return tr("step %1").arg(*step);
  if (!has_steps())
    return tr("phase %1").arg(phase);
  if (phase == 0)
    return tr("set-up");
  if (phase > step_phases_.back())
    return tr("tear-down");
  return phase > step_phases_.front() ? tr("between steps") : tr("phase %1").arg(phase);
}

std::optional<std::pair<std::int64_t, std::int64_t>> PhaseNames::span(int phase,
                                                                      std::int64_t trace_end_ns) const {
  std::optional<std::pair<std::int64_t, std::int64_t>> span;
  for (const auto& entry : phases_) {
    if (entry.phase != phase)
      continue;
    const auto end = entry.end_ns.value_or(trace_end_ns);
    span = span ? std::pair{std::min(span->first, entry.start_ns), std::max(span->second, end)}
                : std::pair{entry.start_ns, end};
  }
  return span;
}

std::optional<std::pair<std::int64_t, std::int64_t>> PhaseNames::setup(std::int64_t trace_end_ns) const {
  return has_steps() ? span(0, trace_end_ns) : std::nullopt;
}

std::optional<std::pair<std::int64_t, std::int64_t>>
PhaseNames::opening_window(std::int64_t trace_end_ns) const {
  if (!has_steps())
    return std::nullopt;
  // Runs of one or two steps have no warm-up left out: they open on all of them.
  const auto first =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(warmup_steps_, 0)), step_phases_.size() - 1);
  const auto last = std::min(step_phases_.size(), first + kOpeningSteps) - 1;
  const auto from = span(step_phases_[first], trace_end_ns), to = span(step_phases_[last], trace_end_ns);
  if (!from || !to)
    return std::nullopt;
  return std::pair{from->first, std::max(from->second, to->second)};
}

} // namespace commlens::viewer
