// `commlens tune [options] [-- LAUNCHER...]`: measures the GPU runtime's choices on this machine
// for the current rank count and GPU sharing, and writes the tuning table (docs/runtime.md,
// Tuning). Each sweep program (cli/tune/*_sweep.cpp) runs once under the profiler with
// COMMLENS_RUNTIME_SELECT=sweep, so every call runs the next candidate in turn; the traces'
// runtime_ops rows are the measurements, the fastest candidate per size wins (measured_rules.hpp),
// and every rule carries the measurement it came from.
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "dynamic_candidates.hpp"
#include "launch/gpu_probe.hpp"
#include "launch/preload_library.hpp"
#include "mps_detection.hpp"
#include "resident_rules.hpp"
#include "shipped_tables.hpp"
#include "tune/sweep_calls.hpp"
#include "tune/sweep_runs.hpp"
#include "tune/tune_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

namespace commlens::cli {
namespace {

namespace fs = std::filesystem;
using namespace runtime::tuning;

constexpr const char* kOperations[] = {"allreduce", "trees", "data_movement", "p2p", "resident"};
constexpr std::uint32_t kSweptHostPercents[] = {0, 10, 25};
constexpr std::uint64_t kSmallestStripedBytes = std::uint64_t{1} << 20;
// The resident kernel is measured up to this size: each rank holds two halves of it on the GPU,
// and from 64 KiB the IPC algorithms already won most collectives (docs/performance-runtime.md).
constexpr std::uint64_t kLargestResidentBytes = std::uint64_t{1} << 20;

// The MPI function of a collective as the table names it: reduce_scatter -> MPI_Reduce_scatter.
std::string mpi_function(std::string_view collective) {
  std::string function = fmt::format("MPI_{}", collective);
  function[4] = static_cast<char>(std::toupper(static_cast<unsigned char>(function[4])));
  return function;
}

// The data-movement collectives (kCollectives) by the names the table and
// COMMLENS_RUNTIME_COLLECTIVES use.
std::vector<std::string_view> movement_collective_names() {
  std::vector<std::string_view> names;
  for (const Collective collective : kCollectives)
    names.emplace_back(collective_name(collective));
  return names;
}

struct TuneArguments {
  std::string output;
  int ranks = 4;
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
  int iterations = 20;
  int factor = 2;
  bool quick = false;
  std::uint32_t host_percent = 0;
  std::vector<std::string> operations{std::begin(kOperations), std::end(kOperations)};
  std::vector<std::string> launcher;
};

// What every sweep's measurement shares, and where this run stands.
struct TuneRun {
  const TuneArguments& arguments;
  std::string gpu;
  int gpus = 1; // the GPUs the ranks run on (rank r on GPU r % GPUs)
  MeasuredShape shape;
  fs::path runs;
  std::string command;
  Table table;
  int step = 0;
  int steps = 0;
};

GpuCount gpu_count_of(int gpus) {
  return gpus == 1 ? GpuCount::One : (gpus == 2 ? GpuCount::Two : GpuCount::More);
}

std::vector<std::string> sweep_arguments(const TuneArguments& arguments, int calls, std::uint64_t min_bytes,
                                         std::uint64_t max_bytes) {
  return {std::to_string(calls), std::to_string(min_bytes), std::to_string(max_bytes),
          std::to_string(arguments.factor)};
}

// Profiles one sweep with progress lines around it; returns its database.
fs::path run_step(TuneRun& run, SweepRun sweep) {
  ++run.step;
  fmt::print(stderr, "commlens tune: [{}/{}] {} ...\n", run.step, run.steps, sweep.label);
  const auto start = std::chrono::steady_clock::now();
  const fs::path database = profile_sweep(sweep, run.arguments.launcher, run.runs);
  fmt::print(stderr, "commlens tune: [{}/{}] {} done in {:.0f} s\n", run.step, run.steps, sweep.label,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return database;
}

std::vector<WinnerRun> measured_runs(const fs::path& database, const std::string& function,
                                     const std::function<std::string(const std::string&)>& rename = {}) {
  std::vector<CandidateCall> calls = read_calls(database, function);
  if (calls.empty())
    throw analysis::AnalysisError(
        fmt::format("the sweep recorded no runtime {} calls ({}: is libcommlens_cuda.so "
                    "built, and did the runtime start?)",
                    function, database.string()));
  if (rename)
    for (CandidateCall& call : calls)
      call.candidate = rename(call.candidate);
  return winner_runs(candidate_timings(calls));
}

std::string add_measurement(TuneRun& run, const std::string& sweep) {
  // Under MPS the data-movement rules are of another shape; their measurement needs its own name.
  const std::string id =
      fmt::format("{}:{}ranks:{}gpus{}", sweep, run.arguments.ranks, run.gpus, run.shape.mps ? ":mps" : "");
  run.table.measurements.push_back(
      describe_measurement(id, run.gpu, run.arguments.ranks, run.gpus, run.shape.mps, run.command));
  return id;
}

void tune_allreduce(TuneRun& run) {
  const TuneArguments& arguments = run.arguments;
  const bool striping = arguments.host_percent > 0 && arguments.ranks == 2 && run.gpus == 2;
  const std::string id = add_measurement(run, "allreduce");
  for (const bool in_place : {false, true}) {
    SweepRun sweep{"commlens-allreduce-sweep",
                   in_place ? "allreduce-in-place" : "allreduce",
                   {{"COMMLENS_RUNTIME_COLLECTIVES", "allreduce"}},
                   sweep_arguments(arguments, arguments.iterations * (striping ? 3 : 2), arguments.min_bytes,
                                   arguments.max_bytes)};
    if (striping)
      sweep.environment.emplace_back("COMMLENS_RUNTIME_HOST_PERCENT", std::to_string(arguments.host_percent));
    if (in_place)
      sweep.arguments.emplace_back("in_place");
    // Ranks sharing a GPU run one-shot as the shared-GPU implementation: the same table algorithm.
    const auto runs = measured_runs(run_step(run, sweep), "MPI_Allreduce", [](const std::string& name) {
      return name == "shared_gpu" ? std::string("one_shot") : name;
    });
    const auto rules = allreduce_rules(runs, run.shape, in_place, arguments.host_percent, id);
    run.table.rules.insert(run.table.rules.end(), rules.begin(), rules.end());
  }
}

void tune_trees(TuneRun& run) {
  const TuneArguments& arguments = run.arguments;
  // As many calls per size as the widest candidate list has candidates, times the iterations.
  const Table shipped = shipped_table_for_gpu(run.gpu).table;
  const std::size_t widest =
      tree_candidates(shipped, "", {RootedCollective::Bcast, arguments.ranks, run.gpus, arguments.max_bytes},
                      TreeBreadth::Sweep)
          .size();
  const fs::path database =
      run_step(run, {"commlens-tree-sweep",
                     "bcast+reduce",
                     {{"COMMLENS_RUNTIME_COLLECTIVES", "bcast,reduce"}},
                     sweep_arguments(arguments, arguments.iterations * static_cast<int>(widest),
                                     arguments.min_bytes, arguments.max_bytes)});
  const std::string id = add_measurement(run, "trees");
  for (const auto& [function, collective] :
       {std::pair{"MPI_Bcast", RootedCollective::Bcast}, std::pair{"MPI_Reduce", RootedCollective::Reduce}}) {
    const auto rules = tree_rules(measured_runs(database, function), collective, run.shape, id);
    run.table.trees.insert(run.table.trees.end(), rules.begin(), rules.end());
  }
}

void tune_data_movement(TuneRun& run) {
  const TuneArguments& arguments = run.arguments;
  const std::uint64_t largest_block = std::max(arguments.min_bytes, arguments.max_bytes / arguments.ranks);
  const fs::path database = run_step(
      run,
      {"commlens-movement-sweep",
       "data-movement",
       {{"COMMLENS_RUNTIME_COLLECTIVES", fmt::format("{}", fmt::join(movement_collective_names(), ","))}},
       // direct, gpu_leader and staged (movement_candidates) take turns
       sweep_arguments(arguments, arguments.iterations * 3, std::max<std::uint64_t>(arguments.min_bytes, 4),
                       largest_block)});
  const std::string id = add_measurement(run, "data_movement");
  for (const Collective collective : kCollectives) {
    const auto rules = movement_rules(measured_runs(database, mpi_function(collective_name(collective))),
                                      collective, run.shape, id);
    run.table.data_movement.insert(run.table.data_movement.end(), rules.begin(), rules.end());
  }
}

// Host shares of device messages between two GPUs; the rule stripes from the smallest size from
// which a share above 0 won at every larger size.
void tune_p2p(TuneRun& run) {
  const TuneArguments& arguments = run.arguments;
  std::vector<CandidateCall> calls;
  for (const std::uint32_t percent : kSweptHostPercents) {
    const std::string name = fmt::format("host_percent={}", percent);
    const fs::path database = run_step(
        run, {"commlens-p2p-sweep",
              "p2p-" + name,
              {{"COMMLENS_RUNTIME_COLLECTIVES", "p2p"},
               {"COMMLENS_RUNTIME_HOST_PERCENT", std::to_string(percent)}},
              sweep_arguments(arguments, arguments.iterations,
                              std::max(kSmallestStripedBytes, arguments.min_bytes), arguments.max_bytes)});
    for (const char* function : {"MPI_Send", "MPI_Recv"})
      for (CandidateCall call : read_calls(database, function)) {
        call.candidate = name;
        calls.push_back(std::move(call));
      }
  }
  const std::vector<WinnerRun> runs = winner_runs(candidate_timings(calls));
  if (runs.empty())
    throw analysis::AnalysisError("the point-to-point sweeps recorded no runtime sends or receives");
  PointToPointStripe& stripe = run.table.point_to_point;
  const WinnerRun& last = runs.back();
  const auto percent = static_cast<std::uint32_t>(std::stoul(last.winner.substr(last.winner.find('=') + 1)));
  stripe.host_percent = percent;
  stripe.min_bytes = percent > 0 ? last.points.front().bytes : stripe.min_bytes;
  stripe.why = percent > 0 ? last.why + " with this share" : "no host share was faster at the largest sizes";
  RuleMeasurement measured{add_measurement(run, "p2p"), {}};
  for (const WinnerRun& each : runs)
    measured.points.insert(measured.points.end(), each.points.begin(), each.points.end());
  stripe.measured = std::move(measured);
}

// The resident kernel against the table's other algorithms, ranks sharing one GPU under MPS: each
// sweep program twice under static selection (a sweep leaves the resident kernel out), with the
// kernel off and with it taking every call it can. Per collective, the largest size the kernel
// won is its limit (resident_rule).
void tune_resident(TuneRun& run) {
  const TuneArguments& arguments = run.arguments;
  const std::uint64_t largest = std::min(arguments.max_bytes, kLargestResidentBytes);
  // The machine's table, its resident rules replaced by ones that let the kernel take every call
  // up to the largest size (without a rule the allreduce would stop at the built-in limit).
  Table unlimited = shipped_table_for_gpu(run.gpu).table;
  unlimited.resident.clear();
  for (const std::string_view collective : kResidentCollectives)
    unlimited.resident.push_back({.collective = std::string(collective), .max_bytes = largest});
  const fs::path table_file = run.runs / "table-resident-unlimited.json";
  std::ofstream(table_file) << table_json(unlimited);
  setenv("COMMLENS_RUNTIME_SELECT", "static", 1);
  setenv("COMMLENS_RUNTIME_TUNING", table_file.c_str(), 1);
  const std::string id = add_measurement(run, "resident");
  struct Program {
    const char* name;
    const char* label;
    std::vector<std::string_view> collectives; // as the table names them (kResidentCollectives)
    std::uint64_t min_bytes;
  };
  const Program programs[] = {
      {"commlens-allreduce-sweep", "allreduce", {"allreduce"}, arguments.min_bytes},
      {"commlens-tree-sweep", "bcast+reduce", {"bcast", "reduce"}, arguments.min_bytes},
      {"commlens-movement-sweep", "data-movement", movement_collective_names(),
       std::max<std::uint64_t>(arguments.min_bytes, 4)}};
  for (const Program& program : programs) {
    std::map<std::string_view, std::vector<CandidateCall>> calls; // per collective, both runs
    for (const bool resident : {false, true}) {
      const fs::path database = run_step(
          run, {program.name,
                fmt::format("resident-{}-{}", resident ? "on" : "off", program.label),
                {{"COMMLENS_RUNTIME_COLLECTIVES", fmt::format("{}", fmt::join(program.collectives, ","))},
                 {"COMMLENS_RUNTIME_RESIDENT_BYTES", resident ? std::to_string(largest) : "0"}},
                sweep_arguments(arguments, arguments.iterations, program.min_bytes, largest)});
      for (const std::string_view collective : program.collectives)
        for (CandidateCall call : read_calls(database, mpi_function(collective))) {
          // With the kernel on, a call it did not take (a rank declined it) measures nothing.
          if (resident && call.candidate != "resident")
            continue;
          call.candidate = resident ? "resident" : "table";
          calls[collective].push_back(std::move(call));
        }
    }
    for (const std::string_view collective : program.collectives) {
      const std::vector<WinnerRun> runs = winner_runs(candidate_timings(calls[collective]));
      if (runs.empty())
        throw analysis::AnalysisError(
            fmt::format("the resident sweeps recorded no runtime {} calls", mpi_function(collective)));
      run.table.resident.push_back(resident_rule(runs, collective, id));
    }
  }
  setenv("COMMLENS_RUNTIME_SELECT", "sweep", 1);
  unsetenv("COMMLENS_RUNTIME_TUNING");
}

std::string command_line(const TuneArguments& arguments) {
  std::string text = fmt::format(
      "commlens tune --ranks {} --min-bytes {} --max-bytes {} --iterations {} --factor {}", arguments.ranks,
      arguments.min_bytes, arguments.max_bytes, arguments.iterations, arguments.factor);
  if (arguments.host_percent > 0)
    text += fmt::format(" --host-percent {}", arguments.host_percent);
  text += fmt::format(" --ops {}", fmt::join(arguments.operations, ","));
  if (!arguments.launcher.empty())
    text += fmt::format(" -- {}", fmt::join(arguments.launcher, " "));
  return text;
}

bool wants(const TuneArguments& arguments, std::string_view operation) {
  return std::ranges::find(arguments.operations, operation) != arguments.operations.end();
}

int tune(TuneArguments arguments) {
  const GpuProbe probe = probe_gpus();
  if (probe.count == 0) {
    fmt::print(stderr, "commlens tune: no GPU to measure on: {} (tune needs a CUDA build and a GPU)\n",
               probe.problem);
    return kBadInput;
  }
  if (arguments.quick) {
    arguments.iterations = std::min(arguments.iterations, 5);
    arguments.factor = 4;
    arguments.max_bytes = std::min<std::uint64_t>(arguments.max_bytes, std::uint64_t{64} << 20);
  }
  const std::string command = command_line(arguments);
  if (arguments.output.empty())
    arguments.output = default_output(probe.name);
  if (arguments.launcher.empty())
    arguments.launcher = {"mpirun", "-np", std::to_string(arguments.ranks)};
  const int gpus = std::min(arguments.ranks, probe.count);
  // The runtime keys data-movement rules on MPS as it sees it when it starts (mps_detection.hpp).
  TuneRun run{
      arguments, probe.name,
      gpus,      {gpu_count_of(gpus), gpus < arguments.ranks, mps_control_daemon_running(), arguments.ranks},
      {},        command,
      {}};
  run.table.gpu = probe.name;
  const bool p2p = wants(arguments, "p2p") && arguments.ranks == 2 && gpus == 2;
  if (wants(arguments, "p2p") && !p2p)
    fmt::print(stderr, "commlens tune: p2p left out: its host share applies between two GPUs, two ranks\n");
  // The resident kernel runs only for ranks sharing one GPU under MPS (selection/selector.cpp).
  const bool resident = wants(arguments, "resident") && gpus == 1 && run.shape.mps;
  if (wants(arguments, "resident") && !resident)
    fmt::print(stderr, "commlens tune: resident left out: it runs for ranks sharing one GPU under MPS "
                       "(start nvidia-cuda-mps-control -d)\n");
  run.steps = (wants(arguments, "allreduce") ? 2 : 0) + (wants(arguments, "trees") ? 1 : 0) +
              (wants(arguments, "data_movement") ? 1 : 0) + (p2p ? 3 : 0) + (resident ? 6 : 0);

  preload_in_child_processes(find_preload_library());
  setenv("COMMLENS_MODE", "trace", 1);
  setenv("COMMLENS_COLLECTORS", "pmpi", 1); // the runtime needs no CUDA collector, and they cost time
  setenv("COMMLENS_QUIET", "1", 1);
  setenv("COMMLENS_RUNTIME", "on", 1);
  setenv("COMMLENS_RUNTIME_SELECT", "sweep", 1);
  unsetenv("COMMLENS_RUNTIME_ALGORITHM"); // a forced algorithm would leave nothing to sweep
  unsetenv("COMMLENS_RUNTIME_HOST_PERCENT");
  unsetenv("COMMLENS_RUNTIME_TREE_STREAMS"); // nor would forced streams for the trees
  unsetenv("COMMLENS_RUNTIME_TUNING");
  // Steady state: every call runs its candidate, none goes to the host path while a first use's
  // handles open in the background.
  setenv("COMMLENS_RUNTIME_BACKGROUND_OPENS", "0", 1);
  std::string runs_template = (fs::temp_directory_path() / "commlens-tune-XXXXXX").string();
  if (mkdtemp(runs_template.data()) == nullptr)
    throw analysis::AnalysisError("cannot create a directory for the sweeps' profiles");
  run.runs = runs_template;
  fmt::print(stderr, "commlens tune: {} ranks on {} x {}, {} B to {} B; profiles in {}\n", arguments.ranks,
             gpus, probe.name, arguments.min_bytes, arguments.max_bytes, runs_template);

  if (wants(arguments, "allreduce"))
    tune_allreduce(run);
  if (wants(arguments, "trees"))
    tune_trees(run);
  if (wants(arguments, "data_movement"))
    tune_data_movement(run);
  if (p2p)
    tune_p2p(run);
  if (resident)
    tune_resident(run);
  Table table = merge_with_file(std::move(run.table), arguments.output, run.shape);
  if (table.rules.empty())
    throw analysis::AnalysisError(
        "a table needs allreduce rules: measure allreduce (--ops) or write into a table "
        "that has some (--output)");
  const std::string text = table_json(table);
  parse_table(text); // what is written must read back
  std::ofstream file(arguments.output);
  if (!(file << text))
    throw analysis::AnalysisError(fmt::format("--output {}: cannot be written", arguments.output));
  fmt::print("{}", text);
  fmt::print(stderr,
             "commlens tune: wrote {} (use it with COMMLENS_RUNTIME_TUNING={}, or rebuild to ship it)\n",
             arguments.output, fs::absolute(arguments.output).string());
  return kSuccess;
}

} // namespace

void add_tune_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<TuneArguments>();
  auto* command = app.add_subcommand(
      "tune", "Measure the GPU runtime's algorithms and settings here and write a tuning table (needs GPUs)");
  command->add_option(
      "-o,--output", arguments->output,
      "The table to write (JSON); rules of other shapes already in it are kept (default: "
      "runtime/tuning/MODEL.json in a source tree, else MODEL.json, MODEL from the GPU's name)");
  command->add_option("--ranks", arguments->ranks, "Ranks the launcher starts (default 4)")
      ->check(CLI::Range(2, 8));
  command->add_option("--min-bytes", arguments->min_bytes, "Smallest size measured (default 8)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
  command->add_option("--max-bytes", arguments->max_bytes, "Largest size measured (default 256 MiB)")
      ->check(CLI::Range(std::uint64_t{8}, std::uint64_t{1} << 31));
  command
      ->add_option("--iterations", arguments->iterations, "Calls timed per candidate and size (default 20)")
      ->check(CLI::Range(1, 10000));
  command->add_option("--factor", arguments->factor, "Each size is the previous one times this (default 2)")
      ->check(CLI::Range(2, 64));
  command->add_flag("--quick", arguments->quick,
                    "Seconds for 4 ranks: 5 calls per candidate, sizes x4, up to 64 MiB");
  command
      ->add_option("--ops", arguments->operations,
                   "What to measure (default all): allreduce, trees, data_movement, p2p (two ranks on "
                   "two GPUs only), resident (ranks sharing one GPU under MPS only)")
      ->delimiter(',')
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kOperations), std::end(kOperations))));
  command
      ->add_option("--host-percent", arguments->host_percent,
                   "Also measure allreduce striping with this host share (two ranks on two GPUs)")
      ->check(CLI::Range(0, 50));
  command->add_option("launcher", arguments->launcher,
                      "The launcher, after -- (default: mpirun -np RANKS); the sweep is appended");
  command->footer(
      "The sweeps' profiles stay in a temporary directory, named on stderr.\n\nExit status:\n  0  "
      "the table was written\n  2  no GPU, a sweep that failed, or bad usage");
  command->callback([arguments, &exit_status] { exit_status = tune(*arguments); });
}

} // namespace commlens::cli
