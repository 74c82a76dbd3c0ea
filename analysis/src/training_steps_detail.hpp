#pragma once
// Shared by the training-steps query files: the step phases as a CTE (binds ?1 rank, ?2 phase like
// every report query) and the per-step formatting.
#include "commlens/analysis/training_steps.hpp"

#include <string>
#include <string_view>

namespace commlens::analysis::detail {

// `steps(rank, phase, start_ns, end_ns)`: phases opened by MPI_Pcontrol(2) and closed by a later
// phase of the same rank.
inline constexpr std::string_view kStepPhasesSql = R"sql(
WITH last_phase AS (SELECT rank, MAX(phase) AS phase FROM phases GROUP BY rank),
steps AS (
  SELECT p.rank, p.phase, p.start_ns, p.end_ns FROM phases p JOIN last_phase l ON l.rank = p.rank
  WHERE p.pcontrol_level = 2 AND p.phase < l.phase AND p.end_ns IS NOT NULL
    AND (?1 IS NULL OR p.rank = ?1) AND (?2 IS NULL OR p.phase = ?2))
)sql";

// "3", "2.5", "0.33": a per-step count without trailing zeros.
std::string per_step_count(double value);

void read_step_overlap(const Database& database, const ReportFilter& filter, TrainingSteps& section);
void read_step_pvars(const Database& database, const ReportFilter& filter, TrainingSteps& section);
void read_step_copies(const Database& database, const ReportFilter& filter, TrainingSteps& section);
// The GPU breakdown per step and the NCCL calls' GPU time (training_steps_gpu.cpp); after the steps
// and the collective sizes are read.
void read_step_gpu(const Database& database, const ReportFilter& filter, TrainingSteps& section);

} // namespace commlens::analysis::detail
