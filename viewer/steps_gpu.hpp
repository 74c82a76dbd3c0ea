#pragma once
// The Steps view's GPU side, from the training-steps analysis (training_steps.hpp): per step where
// the GPU's time went in the steps whose kernels were recorded (COMMLENS_KERNELS=steps): compute
// alone, compute overlapped by communication, communication alone (exposed: the step waits for it)
// and idle; and per step the NCCL calls' time on the GPU from CUDA events, which every run with
// NCCL has.
#include "bar_chart.hpp"

#include "commlens/analysis/training_steps.hpp"

#include <QStringList>

namespace commlens::viewer {

// One column per step with a breakdown (gpu_ranks > 0), means over its ranks: "compute",
// "overlapped communication", "exposed communication", "idle". Empty without a breakdown.
std::vector<Bar> gpu_breakdown_bars(const analysis::TrainingSteps& steps);
// One column per step: the NCCL calls' time on the GPU; empty when no step has any.
std::vector<Bar> nccl_gpu_bars(const analysis::TrainingSteps& steps);

// The GPU table, steps as columns ("step 1", ...): headers, then a row per figure; "-" where a
// step has no such figure. Empty when no step has a breakdown or NCCL GPU time.
QStringList gpu_table_headers(const analysis::TrainingSteps& steps);
std::vector<QStringList> gpu_table_rows(const analysis::TrainingSteps& steps);

// The status line's GPU part: medians after the warm-up, or why there is no breakdown.
QString gpu_summary_line(const analysis::TrainingSteps& steps);

} // namespace commlens::viewer
