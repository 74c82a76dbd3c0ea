#include "kernel_schedule.hpp"

#include <algorithm>

namespace commlens::cuda {

KernelSchedule::KernelSchedule(KernelRecording mode, std::vector<StepSpan> steps)
    : mode_(mode), spans_(std::move(steps)), recording_(mode == KernelRecording::All) {}

bool KernelSchedule::in_kernel_steps(std::uint32_t step) const {
  return std::ranges::any_of(
      spans_, [step](const StepSpan& span) { return step >= span.first && step <= span.last; });
}

bool KernelSchedule::phase_begun(int level) {
  if (level == 2) {
    ++step_;
  }
  if (mode_ != KernelRecording::Steps) {
    return recording_;
  }
  if (level == 2) {
    recording_ = in_kernel_steps(step_);
  } else if (step_ > 0 && !in_kernel_steps(step_ + 1)) {
    // The time between a kernel step and the next step belongs to the window only when that next
    // step is in it too.
    recording_ = false;
  }
  return recording_;
}

std::string KernelSchedule::describe() const {
  switch (mode_) {
  case KernelRecording::All:
    return "every kernel (COMMLENS_KERNELS=all)";
  case KernelRecording::Steps:
    return "steps " + step_spans_text(spans_) + " (COMMLENS_KERNELS=steps)";
  case KernelRecording::Off:
    break;
  }
  return "none (COMMLENS_KERNELS=off)";
}

} // namespace commlens::cuda
