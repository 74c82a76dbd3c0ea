#pragma once
// Training steps marked by NVTX ranges (COMMLENS_STEP_RANGE): a range of NVTX's default domain
// whose name is the configured one, alone or followed by a step number ("step", "Step 12",
// "step#12", "step_12"), opens a step when pushed and ends it when popped. A step range inside
// another open step range (a framework's and the program's own) is not a second step. No CUDA:
// unit-tested on any machine; nvtx_steps.cpp feeds it from CUPTI's NVTX callbacks.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::cuda {

bool is_step_range(std::string_view name, std::string_view configured) noexcept;

// One thread's open ranges of the default domain (NVTX nests push and pop per thread).
class StepRangeNesting {
public:
  // A range was pushed: true when it opens a step.
  bool pushed(std::string_view name, std::string_view configured);
  // A range was popped: true when it ends a step.
  bool popped();

private:
  std::vector<bool> open_is_step_;
  int open_steps_ = 0;
};

} // namespace commlens::cuda
