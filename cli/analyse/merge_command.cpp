// `commlens merge DIR [-o OUT]`: what rank 0 does at MPI_Finalize, for runs where it could not
// (ranks on separate file systems, a crashed job).
#include "commands.hpp"
#include "commlens/profiler/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

namespace commlens::cli {

namespace {
// COMMLENS_KEEP_RANK_FILES as the profiler reads it (environment or COMMLENS_CONFIG file); a bad
// value is the profiler's to report, here it keeps the default.
bool keep_rank_files_by_environment() {
  return Config::from_environment([](const std::string&) {}).keep_rank_files;
}
} // namespace

MergeResult merge_with_progress(const std::string& directory, const std::string& output_path,
                                bool keep_rank_files) {
  MergeOptions options;
  options.directory = directory;
  options.output_path = output_path;
  options.remove_rank_files = !keep_rank_files && !keep_rank_files_by_environment();
  const bool terminal = isatty(STDERR_FILENO) == 1;
  if (terminal)
    options.progress = [](int done, int total) {
      fmt::print(stderr, "\rcommlens: merging rank files {}/{}", done, total);
      if (done == total)
        fmt::print(stderr, "\n");
    };
  const auto result = merge_rank_databases(options);
  fmt::print(stderr, "commlens: merged {} of {} ranks{} into {} ({} traced calls)\n",
             result.merged_ranks.size(), result.world_size,
             result.jobs > 1 ? fmt::format(" of {} jobs", result.jobs) : "", result.output_path,
             result.calls);
  if (!result.missing_ranks.empty())
    fmt::print(stderr, "commlens: warning: no readable file for ranks {}\n",
               fmt::join(result.missing_ranks, ", "));
  if (const auto losses = describe_losses(result); !losses.empty())
    fmt::print(stderr, "commlens: WARNING: {}\n", losses);
  return result;
}

void add_merge_command(CLI::App& app, int& exit_status) {
  auto directory = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto* command =
      app.add_subcommand("merge", "Merge the per-rank files of a run (rank-NNNNN.sqlite) into one "
                                  "database");
  command->add_option("directory", *directory, "The run's output directory")->required();
  auto keep = std::make_shared<bool>(false);
  command->add_option("-o,--output", *output, "Merged database (default: DIR/commlens.sqlite)");
  command->add_flag(
      "--keep-rank-files", *keep,
      "Keep the rank files after a merge that took every rank (also COMMLENS_KEEP_RANK_FILES=1)");
  command->footer("Exit status:\n  0  merged\n  2  no rank files in DIRECTORY, or the merge failed");
  command->callback([directory, output, keep, &exit_status] {
    merge_with_progress(*directory, *output, *keep);
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
