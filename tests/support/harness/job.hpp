#pragma once
// Runs an example under `mpirun -np 4 --oversubscribe` with libcommlens.so preloaded into the ranks
// and a fresh output directory, and keeps what the job printed. A job of another MPI library (the
// MPICH side-by-side test) names that library's Hydra launcher and its own libcommlens.so.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace commlens::integration {

inline constexpr int kRanks = 4;

struct JobSpec {
  std::vector<std::string> command;               // program and its arguments
  std::optional<std::string> mode;                // COMMLENS_MODE, unset when empty
  std::optional<std::filesystem::path> output;    // COMMLENS_OUTPUT; default: <work>/out
  std::map<std::string, std::string> environment; // more variables for the ranks
  int timeout_seconds = 120;
  int ranks = kRanks; // GPU tests run two ranks
  struct HydraLaunch {
    std::filesystem::path launcher; // mpirun.mpich
    std::filesystem::path preload;  // libcommlens.so built against that MPI
  };
  std::optional<HydraLaunch> hydra; // empty: Open MPI's mpirun and this build's libcommlens.so
  bool without_launcher = false;    // one process started directly, not by mpirun (ranks ignored)
  // Nodes that share no folder, emulated: the ranks are dealt to these folders in equal blocks (one
  // mpirun app context each, with its own COMMLENS_OUTPUT). Empty: every rank writes into `output`.
  std::vector<std::filesystem::path> node_outputs;
};

struct JobResult {
  int exit_code = -1;
  std::string standard_output;
  std::string standard_error;
  std::filesystem::path work_directory;   // the job's cwd, fresh and empty at start
  std::filesystem::path output_directory; // with node_outputs, the first (rank 0's)
  std::filesystem::path merged_database() const { return output_directory / "commlens.sqlite"; }
  std::filesystem::path rank_database(int rank) const;
  std::string describe() const; // exit code and output, for failure messages
};

JobResult run_profiled_job(const JobSpec& spec);

// Programs and paths the build passes in (compile definitions made from generator expressions).
std::string example_program(const std::string& name);
std::string python_interpreter();
std::string mpi4py_example();

} // namespace commlens::integration
