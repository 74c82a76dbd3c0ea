#pragma once
// What one sweep of `commlens tune` measured: every runtime_ops row of a swept function that the
// runtime decided (its algorithms, or the staged baseline as a candidate), after the sweep's
// warm-up (phase 1 on, sweep_plan.hpp) and without opening IPC mappings, as (size, rank,
// candidate, duration).
#include "measured_rules.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace commlens::cli {

// The measured calls of `function` (an MPI name), each named by its runtime_ops.algorithm.
std::vector<runtime::tuning::CandidateCall> read_calls(const std::filesystem::path& database,
                                                       const std::string& function);

} // namespace commlens::cli
