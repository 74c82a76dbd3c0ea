#pragma once
// When the CUDA collector records kernels one by one (COMMLENS_KERNELS, COMMLENS_KERNEL_STEPS,
// COMMLENS_KERNEL_RATE_LIMIT). A kernel record costs the launching thread CPU time at every launch,
// so a training job that launches tens of thousands of kernels a second would run tens of percent
// slower with every kernel recorded. Under `auto` kernels are recorded:
// - before the program marks its first training step, as long as it launches at most the rate
//   limit a second (set-up, and programs that mark no steps and launch few kernels);
// - from the start of the first kernel step to the start of the first phase after the last one,
//   for each span of COMMLENS_KERNEL_STEPS.
// Under `steps` only the second; under `all` every kernel, under `off` none.
// No CUDA here: the activity collector asks and switches CUPTI; unit-tested on any machine.
#include "commlens/profiler/config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::cuda {

class KernelSchedule {
public:
  KernelSchedule(KernelRecording mode, std::vector<StepSpan> steps, std::uint32_t rate_limit);

  // Whether kernels are recorded now.
  bool recording() const noexcept { return recording_; }
  // A phase began: level 2 is a training step (MPI_Pcontrol(2) or an NVTX step range), higher
  // levels the time between steps. Returns recording() after it.
  bool phase_begun(int level);
  // `kernels` kernel records arrived over `seconds` (one activity buffer). Returns recording() after
  // it; false when the rate limit stopped the records.
  bool kernels_arrived(std::uint64_t kernels, double seconds);

  // Training steps marked so far.
  std::uint32_t steps() const noexcept { return step_; }
  // The rate that stopped the records (kernels a second), 0 while none did.
  double stopping_rate() const noexcept { return stopping_rate_; }
  // For the run table: what this schedule records ("every kernel", "steps 6-8", ...).
  std::string describe() const;

private:
  bool in_kernel_steps(std::uint32_t step) const;

  KernelRecording mode_;
  std::vector<StepSpan> spans_;
  std::uint32_t rate_limit_;
  std::uint32_t step_ = 0;
  bool recording_ = false;
  double stopping_rate_ = 0;
  // Kernels and seconds seen before the rate is judged: one buffer may be a burst (a set-up).
  std::uint64_t kernels_seen_ = 0;
  double seconds_seen_ = 0;
};

} // namespace commlens::cuda
