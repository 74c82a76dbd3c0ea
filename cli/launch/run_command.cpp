// `commlens run [options] -- COMMAND...`: profiles COMMAND (typically `mpirun -np 4 ./app`) by
// preloading libcommlens.so, then says where the database is and prints a short summary.
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/report_format.hpp"
#include "launch/child_process.hpp"
#include "launch/preload_library.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace commlens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMergedDatabaseName = "commlens.sqlite";

struct RunArguments {
  std::string output;
  std::string mode;
  std::string collectors;
  int flush_ms = 0;
  bool quiet = false;
  std::vector<std::string> command;
};

// The profile files in the output directory with their modification times, to tell the files this
// run wrote from those an earlier run left behind.
using ProfileFiles = std::map<std::string, fs::file_time_type>;

ProfileFiles list_profile_files(const fs::path& directory) {
  ProfileFiles files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto name = entry.path().filename().string();
    if (name == kMergedDatabaseName || (name.starts_with("rank-") && name.ends_with(".sqlite")))
      files.emplace(name, entry.last_write_time(error));
  }
  return files;
}

bool written_since(const ProfileFiles& before, const ProfileFiles& after, const std::string& name) {
  const auto now = after.find(name);
  if (now == after.end())
    return false;
  const auto then = before.find(name);
  return then == before.end() || then->second != now->second;
}

bool any_rank_file_written_since(const ProfileFiles& before, const ProfileFiles& after) {
  for (const auto& [name, time] : after)
    if (name != kMergedDatabaseName && written_since(before, after, name))
      return true;
  return false;
}

void set_environment(const char* name, const std::string& value) {
  setenv(name, value.c_str(), 1);
}

// Exported before the fork so mpirun passes them on to the ranks it starts on this host.
void export_profiler_environment(const RunArguments& arguments, const fs::path& output,
                                 const fs::path& library) {
  preload_in_child_processes(library);
  set_environment("COMMLENS_OUTPUT", output.string());
  if (!arguments.mode.empty())
    set_environment("COMMLENS_MODE", arguments.mode);
  if (!arguments.collectors.empty())
    set_environment("COMMLENS_COLLECTORS", arguments.collectors);
  if (arguments.flush_ms != 0)
    set_environment("COMMLENS_FLUSH_MS", std::to_string(arguments.flush_ms));
  if (arguments.quiet)
    set_environment("COMMLENS_QUIET", "1");
}

fs::path output_directory(const RunArguments& arguments) {
  std::string directory = arguments.output;
  if (directory.empty()) {
    const char* configured = std::getenv("COMMLENS_OUTPUT");
    directory = configured != nullptr && *configured != '\0' ? configured : "commlens-output";
  }
  // Absolute, because the ranks may start in another working directory.
  const auto absolute = fs::absolute(directory).lexically_normal();
  std::error_code error;
  fs::create_directories(absolute, error);
  if (error)
    throw analysis::AnalysisError(
        fmt::format("--output {}: cannot create directory ({})", absolute.string(), error.message()));
  return absolute;
}

// Reports on what the run left: the merged database, or the rank files merged now (rank 0 merges
// at MPI_Finalize, so rank files alone mean the job ended early or merging was turned off).
void report_profile(const fs::path& output, const ProfileFiles& before, bool quiet) {
  const auto after = list_profile_files(output);
  const auto database = output / kMergedDatabaseName;
  if (!written_since(before, after, kMergedDatabaseName)) {
    if (!any_rank_file_written_since(before, after)) {
      fmt::print(stderr, "commlens: no profile was written to {} (did the command call MPI_Init?)\n",
                 output.string());
      return;
    }
    merge_with_progress(output.string(), database.string(), false);
  }
  fmt::print(stderr, "commlens: database: {}\n", database.string());
  if (quiet)
    return;
  const analysis::Database opened(database);
  analysis::TextReportOptions brief;
  brief.brief = true;
  fmt::print(stderr, "{}", analysis::render_text_report(analysis::build_report(opened), brief));
}

// The library checks COMMLENS_COLLECTORS too, but a typo on the command line is a usage error.
CLI::Validator collector_list_validator() {
  return CLI::Validator(
      [](const std::string& list) -> std::string {
        static const std::set<std::string, std::less<>> known = {"pmpi", "mpit", "cupti",
                                                                 "nvtx", "all",  "none"};
        std::size_t start = 0;
        while (start <= list.size()) {
          const auto end = std::min(list.find(',', start), list.size());
          const auto name = list.substr(start, end - start);
          if (!known.contains(name))
            return fmt::format("unknown collector '{}' (accepted: pmpi, mpit, cupti, nvtx, all, none)", name);
          start = end + 1;
        }
        return {};
      },
      "LIST");
}

int run_profiled(const RunArguments& arguments) {
  const auto library = find_preload_library();
  const auto output = output_directory(arguments);
  const auto before = list_profile_files(output);
  export_profiler_environment(arguments, output, library);

  const int command_status = run_child_process(arguments.command);
  try {
    report_profile(output, before, arguments.quiet);
  } catch (const std::exception& error) {
    fmt::print(stderr, "commlens: error: {}\n", error.what());
    // The command's own failure explains more than ours; report ours only when it succeeded.
    return command_status != 0 ? command_status : kBadInput;
  }
  return command_status;
}

} // namespace

void add_run_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<RunArguments>();
  auto* command =
      app.add_subcommand("run", "Profile a command: commlens run [options] -- mpirun -np 4 ./app");
  command->add_option("-o,--output", arguments->output,
                      "Output directory (default: $COMMLENS_OUTPUT or commlens-output)");
  command->add_option("--mode", arguments->mode, "summary: aggregates only; trace: every call as well")
      ->check(CLI::IsMember({"summary", "trace"}));
  command
      ->add_option("--collectors", arguments->collectors,
                   "Comma-separated: pmpi,mpit,cupti,nvtx | all | none")
      ->check(collector_list_validator());
  command->add_option("--flush-ms", arguments->flush_ms, "Writer flush interval in ms")
      ->check(CLI::Range(10, 1000));
  command->add_flag("-q,--quiet", arguments->quiet, "Print only where the database is");
  command->add_option("command", arguments->command, "The command to profile, after --")->required();
  command->footer(
      "COMMLENS_LIBRARY overrides which libcommlens.so is preloaded. Afterwards: commlens report DIR,\n"
      "commlens-viewer DIR/commlens.sqlite.\n\nExit status: the command's own (128 + N if signal N "
      "ended it, 127 if it could\nnot be started); 2 bad usage, or no profile after a command that "
      "succeeded.");
  command->callback([arguments, &exit_status] { exit_status = run_profiled(*arguments); });
}

} // namespace commlens::cli
