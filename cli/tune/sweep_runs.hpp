#pragma once
// Running one sweep program under the profiler for `commlens tune` (sweep_calls.hpp reads what it
// measured).
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

} // namespace commlens::cli
