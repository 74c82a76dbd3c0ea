// `commlens tune --output table.json [options] [-- LAUNCHER...]`: measures the GPU runtime's
// allreduce algorithms on this machine and writes a tuning table for COMMLENS_RUNTIME_TUNING
// (docs/runtime.md). It profiles the allreduce sweep once per algorithm, forced with
// COMMLENS_RUNTIME_ALGORITHM, reads the traces' runtime_ops and keeps the fastest per size.
#include "commands.hpp"
#include "commlens/analysis/database.hpp"
#include "commlens/analysis/errors.hpp"
#include "launch/child_process.hpp"
#include "launch/gpu_probe.hpp"
#include "launch/preload_library.hpp"
#include "measured_rules.hpp"
#include "shipped_tables.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace commlens::cli {
namespace {

namespace fs = std::filesystem;
using namespace runtime::tuning;

constexpr const char* kSweepName = "commlens-allreduce-sweep";

struct TuneArguments {
  std::string output;
  int ranks = 2;
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  int iterations = 20;
  std::uint32_t host_percent = 0;
  std::vector<std::string> launcher;
};

// $COMMLENS_TUNE_SWEEP, else beside this executable (installed), else in the build tree.
fs::path find_sweep_program() {
  if (const char* configured = std::getenv("COMMLENS_TUNE_SWEEP");
      configured != nullptr && *configured != '\0')
    return fs::absolute(configured);
  std::vector<std::string> candidates;
  std::error_code error;
  if (const auto executable = fs::read_symlink("/proc/self/exe", error); !error)
    candidates.push_back((executable.parent_path() / kSweepName).string());
#ifdef COMMLENS_BUILD_TREE_SWEEP
  candidates.emplace_back(COMMLENS_BUILD_TREE_SWEEP);
#endif
  for (const auto& candidate : candidates)
    if (fs::is_regular_file(candidate))
      return candidate;
  throw analysis::AnalysisError(fmt::format("cannot find {} (built with CUDA only; looked in: {}); set "
                                            "COMMLENS_TUNE_SWEEP to its path",
                                            kSweepName, fmt::join(candidates, ", ")));
}

// The calls of one sweep that ran the forced algorithm; those that opened IPC mappings (the
// warm-up) are left out.
std::vector<Timing> read_timings(const fs::path& database_path, Algorithm algorithm,
                                 std::uint32_t host_percent) {
  const analysis::Database database(database_path);
  auto query = database.prepare(R"sql(
SELECT bytes, rank, end_ns - start_ns FROM runtime_ops
WHERE decision = 'runtime' AND decision_source = 'forced' AND ipc_opens = 0)sql");
  std::vector<CallDuration> calls;
  while (query.step())
    calls.push_back({static_cast<std::uint64_t>(query.integer(0)), query.integer(1), query.integer(2)});
  return timings_from_calls(calls, algorithm, host_percent);
}

// One profiled sweep with `algorithm` forced; returns its merged database.
fs::path profile_sweep(const TuneArguments& arguments, Algorithm algorithm, const fs::path& runs,
                       const fs::path& sweep) {
  const fs::path output = runs / algorithm_name(algorithm);
  fs::create_directories(output);
  setenv("COMMLENS_OUTPUT", output.c_str(), 1);
  setenv("COMMLENS_RUNTIME_ALGORITHM", algorithm_name(algorithm), 1);
  if (algorithm == Algorithm::OneShotStriped)
    setenv("COMMLENS_RUNTIME_HOST_PERCENT", std::to_string(arguments.host_percent).c_str(), 1);
  else
    unsetenv("COMMLENS_RUNTIME_HOST_PERCENT");
  std::vector<std::string> command = arguments.launcher;
  command.insert(command.end(),
                 {sweep.string(), std::to_string(arguments.iterations), std::to_string(arguments.max_bytes)});
  fmt::print(stderr, "commlens tune: {}: {}\n", algorithm_name(algorithm), fmt::join(command, " "));
  if (const int status = run_child_process(command); status != 0)
    throw analysis::AnalysisError(fmt::format("the {} sweep failed with status {} (profiles in {})",
                                              algorithm_name(algorithm), status, output.string()));
  const fs::path database = output / "commlens.sqlite";
  if (!fs::exists(database))
    merge_with_progress(output.string(), database.string(), false);
  return database;
}

GpuCount gpu_count_of(int gpus) {
  return gpus == 1 ? GpuCount::One : (gpus == 2 ? GpuCount::Two : GpuCount::More);
}

int tune(TuneArguments arguments) {
  const GpuProbe gpus = probe_gpus();
  if (gpus.count == 0) {
    fmt::print(stderr, "commlens tune: no GPU to measure on: {}\n", gpus.problem);
    return kBadInput;
  }
  // As the sweep places them: rank r on GPU r % GPUs.
  const int used_gpus = std::min(arguments.ranks, gpus.count);
  const MeasuredShape shape{gpu_count_of(used_gpus), used_gpus < arguments.ranks, false};
  std::vector<Algorithm> candidates{Algorithm::OneShot, Algorithm::TwoShot};
  if (arguments.host_percent > 0 && arguments.ranks == 2 && used_gpus == 2)
    candidates.push_back(Algorithm::OneShotStriped);
  if (arguments.launcher.empty())
    arguments.launcher = {"mpirun", "-np", std::to_string(arguments.ranks)};

  const fs::path sweep = find_sweep_program();
  preload_in_child_processes(find_preload_library());
  setenv("COMMLENS_MODE", "trace", 1);
  setenv("COMMLENS_COLLECTORS", "pmpi", 1); // the runtime needs no CUDA collector, and they cost time
  setenv("COMMLENS_QUIET", "1", 1);
  setenv("COMMLENS_RUNTIME", "on", 1);
  // Steady state: every call runs the forced algorithm, none goes to the host path while a first
  // use's handles open in the background.
  setenv("COMMLENS_RUNTIME_BACKGROUND_OPENS", "0", 1);
  std::string runs_template = (fs::temp_directory_path() / "commlens-tune-XXXXXX").string();
  if (mkdtemp(runs_template.data()) == nullptr)
    throw analysis::AnalysisError("cannot create a directory for the sweeps' profiles");
  fmt::print(stderr, "commlens tune: {} ranks on {} x {}; profiles in {}\n", arguments.ranks, used_gpus,
             gpus.name, runs_template);

  std::vector<Timing> timings;
  for (const Algorithm algorithm : candidates) {
    const auto database = profile_sweep(arguments, algorithm, runs_template, sweep);
    const auto measured = read_timings(database, algorithm, arguments.host_percent);
    if (measured.empty())
      throw analysis::AnalysisError(fmt::format("the {} sweep recorded no runtime calls ({}: is "
                                                "libcommlens_cuda.so built, and did the runtime start?)",
                                                algorithm_name(algorithm), database.string()));
    timings.insert(timings.end(), measured.begin(), measured.end());
  }
  Table table{gpus.name, rules_from_timings(timings, shape)};
  // Other shapes (in place, other GPU counts) keep the shipped rules.
  const Table shipped = shipped_table_for_gpu(gpus.name).table;
  table.rules.insert(table.rules.end(), shipped.rules.begin(), shipped.rules.end());
  const std::string text = table_json(table);
  std::ofstream file(arguments.output);
  if (!(file << text))
    throw analysis::AnalysisError(fmt::format("--output {}: cannot be written", arguments.output));
  fmt::print("{}", text);
  fmt::print(stderr, "commlens tune: wrote {} (use it with COMMLENS_RUNTIME_TUNING={})\n", arguments.output,
             fs::absolute(arguments.output).string());
  return kSuccess;
}

} // namespace

void add_tune_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<TuneArguments>();
  auto* command = app.add_subcommand(
      "tune", "Measure the GPU runtime's allreduce algorithms here and write a tuning table (needs GPUs)");
  command->add_option("-o,--output", arguments->output, "The table to write (JSON)")->required();
  command->add_option("--ranks", arguments->ranks, "Ranks the launcher starts (default 2)")
      ->check(CLI::Range(2, 8));
  command->add_option("--max-bytes", arguments->max_bytes, "Largest size measured (default 1 GiB)")
      ->check(CLI::Range(std::uint64_t{8}, std::uint64_t{1} << 31));
  command->add_option("--iterations", arguments->iterations, "Calls timed per size (default 20)")
      ->check(CLI::Range(1, 10000));
  command
      ->add_option("--host-percent", arguments->host_percent,
                   "Also measure striping with this host share (two ranks on two GPUs)")
      ->check(CLI::Range(0, 50));
  command->add_option("launcher", arguments->launcher,
                      "The launcher, after -- (default: mpirun -np RANKS); the sweep is appended");
  command->footer("Exit status 2 without a GPU. The sweeps' profiles stay in a temporary directory, named "
                  "on stderr.");
  command->callback([arguments, &exit_status] { exit_status = tune(*arguments); });
}

} // namespace commlens::cli
