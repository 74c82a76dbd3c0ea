#pragma once
// Running one sweep program under the profiler for `commlens tune` and reading what it measured:
// every runtime_ops row of the swept functions the runtime decided (its algorithms, or the staged
// baseline as a candidate) without opening IPC mappings, as (size, rank, candidate, duration).
#include "measured_rules.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace commlens::cli {

struct SweepRun {
  std::string program; // commlens-NAME-sweep
  std::string label;   // for progress lines and the profiles' directory
  std::vector<std::pair<std::string, std::string>> environment; // set for this run only
  std::vector<std::string> arguments;                           // CALLS MIN MAX FACTOR [in_place]
};

// $COMMLENS_TUNE_SWEEPS/PROGRAM, else beside this executable (installed), else in the build tree.
std::filesystem::path find_sweep_program(const std::string& program);

// Profiles the sweep under `launcher` into runs/LABEL and returns the merged database. Throws
// AnalysisError when it fails.
std::filesystem::path profile_sweep(const SweepRun& sweep, const std::vector<std::string>& launcher,
                                    const std::filesystem::path& runs);

// The measured calls of `function` (an MPI name), each named by its runtime_ops.algorithm.
std::vector<runtime::tuning::CandidateCall> read_calls(const std::filesystem::path& database,
                                                       const std::string& function);

} // namespace commlens::cli
