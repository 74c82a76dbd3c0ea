#include "tune/sweep_runs.hpp"

#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "launch/child_process.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

namespace commlens::cli {

namespace fs = std::filesystem;

fs::path find_sweep_program(const std::string& program) {
  std::vector<std::string> candidates;
  if (const char* configured = std::getenv("COMMLENS_TUNE_SWEEPS");
      configured != nullptr && *configured != '\0')
    candidates.push_back((fs::path(configured) / program).string());
  std::error_code error;
  if (const auto executable = fs::read_symlink("/proc/self/exe", error); !error)
    candidates.push_back((executable.parent_path() / program).string());
#ifdef COMMLENS_BUILD_TREE_SWEEPS
  candidates.push_back((fs::path(COMMLENS_BUILD_TREE_SWEEPS) / program).string());
#endif
  for (const auto& candidate : candidates)
    if (fs::is_regular_file(candidate))
      return fs::absolute(candidate);
  throw analysis::AnalysisError(fmt::format("cannot find {} (built with CUDA only; looked in: {}); set "
                                            "COMMLENS_TUNE_SWEEPS to the folder that holds it",
                                            program, fmt::join(candidates, ", ")));
}

fs::path profile_sweep(const SweepRun& sweep, const std::vector<std::string>& launcher,
                       const fs::path& runs) {
  const fs::path output = runs / sweep.label;
  fs::create_directories(output);
  setenv("COMMLENS_OUTPUT", output.c_str(), 1);
  for (const auto& [name, value] : sweep.environment)
    setenv(name.c_str(), value.c_str(), 1);
  std::vector<std::string> command = launcher;
  command.push_back(find_sweep_program(sweep.program).string());
  command.insert(command.end(), sweep.arguments.begin(), sweep.arguments.end());
  fmt::print(stderr, "commlens tune: {}: {}\n", sweep.label, fmt::join(command, " "));
  const int status = run_child_process(command);
  for (const auto& [name, value] : sweep.environment)
    unsetenv(name.c_str());
  if (status != 0)
    throw analysis::AnalysisError(fmt::format("the {} sweep failed with status {} (profiles in {})",
                                              sweep.label, status, output.string()));
  const fs::path database = output / "commlens.sqlite";
  if (!fs::exists(database))
    merge_with_progress(output.string(), database.string(), false);
  return database;
}

} // namespace commlens::cli
