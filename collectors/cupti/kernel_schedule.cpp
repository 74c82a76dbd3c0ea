#include "kernel_schedule.hpp"

#include <algorithm>

namespace commlens::cuda {

namespace {
// The rate is judged over at least this long, so that one burst (a model's first forward pass)
// does not stop the records of a program that launches few kernels afterwards.
constexpr double kRateWindowSeconds = 2.0;
} // namespace

KernelSchedule::KernelSchedule(KernelRecording mode, std::vector<StepSpan> steps, std::uint32_t rate_limit)
    : mode_(mode), spans_(std::move(steps)), rate_limit_(rate_limit),
      recording_(mode == KernelRecording::Auto || mode == KernelRecording::All) {}

bool KernelSchedule::in_kernel_steps(std::uint32_t step) const {
  return std::ranges::any_of(spans_, [step](const StepSpan& span) { return step >= span.first && step <= span.last; });
}

bool KernelSchedule::phase_begun(int level) {
  if (mode_ != KernelRecording::Auto && mode_ != KernelRecording::Steps) {
    return recording_;
  }
  if (level == 2) {
    ++step_;
    recording_ = in_kernel_steps(step_);
  } else if (step_ > 0 && !in_kernel_steps(step_ + 1)) {
    // The time between a kernel step and the next step belongs to the window only when that next
    // step is in it too.
    recording_ = false;
  }
  return recording_;
}

bool KernelSchedule::kernels_arrived(std::uint64_t kernels, double seconds) {
  if (mode_ != KernelRecording::Auto || step_ > 0 || !recording_ || rate_limit_ == 0) {
    return recording_;
  }
  kernels_seen_ += kernels;
  seconds_seen_ += seconds;
  if (seconds_seen_ < kRateWindowSeconds) {
    return recording_;
  }
  const double rate = static_cast<double>(kernels_seen_) / seconds_seen_;
  kernels_seen_ = 0;
  seconds_seen_ = 0;
  if (rate > rate_limit_) {
    recording_ = false;
    stopping_rate_ = rate;
  }
  return recording_;
}

std::string KernelSchedule::describe() const {
  switch (mode_) {
  case KernelRecording::All:
    return "every kernel (COMMLENS_KERNELS=all)";
  case KernelRecording::Off:
    return "none (COMMLENS_KERNELS=off)";
  case KernelRecording::Steps:
    return "steps " + step_spans_text(spans_) + " (COMMLENS_KERNELS=steps)";
  case KernelRecording::Auto:
    break;
  }
  const std::string before_steps =
      rate_limit_ == 0 ? "every kernel before the first step"
                       : "every kernel before the first step while at most " + std::to_string(rate_limit_) +
                             " are launched a second";
  return "steps " + step_spans_text(spans_) + ", and " + before_steps + " (COMMLENS_KERNELS=auto)";
}

} // namespace commlens::cuda
