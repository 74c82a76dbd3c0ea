#pragma once
// When the CUDA collector records kernels one by one (COMMLENS_KERNELS, COMMLENS_KERNEL_STEPS):
// never (off, the default), every kernel (all), or in the kernel steps (steps): from the start of
// the first step of each span of COMMLENS_KERNEL_STEPS to the start of the first phase after its
// last step. Why off by default: once CUPTI has recorded kernels, every later launch of the process
// costs more, even after the records are switched off (docs/performance.md). No CUDA here: the
// activity collector asks and switches CUPTI; unit-tested on any machine.
#include "commlens/profiler/config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::cuda {

class KernelSchedule {
public:
  KernelSchedule(KernelRecording mode, std::vector<StepSpan> steps);

  // Whether kernels are recorded now.
  bool recording() const noexcept { return recording_; }
  // A phase began: level 2 is a training step (MPI_Pcontrol(2) or an NVTX step range), higher
  // levels the time between steps. Returns recording() after it.
  bool phase_begun(int level);

  // Training steps marked so far.
  std::uint32_t steps() const noexcept { return step_; }
  // For the run table: what this schedule records ("every kernel", "steps 6-8", ...).
  std::string describe() const;

private:
  bool in_kernel_steps(std::uint32_t step) const;

  KernelRecording mode_;
  std::vector<StepSpan> spans_;
  std::uint32_t step_ = 0;
  bool recording_ = false;
};

} // namespace commlens::cuda
