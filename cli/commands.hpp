#pragma once
// The subcommands of the `commlens` CLI, one file each. A subcommand stores its exit status in
// `exit_status`; errors it cannot handle propagate as exceptions that main() maps to status 2.
#include "commlens/profiler/merge.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace commlens::cli {

// Documented in `commlens --help`; CI scripts depend on them.
enum ExitStatus : int {
  kSuccess = 0,
  kRegression = 1, // `commlens check` found a regression against its baseline
  kBadInput = 2,
};

// The footer of a subcommand that either succeeds or refuses its input: "Exit status: 0 <success>,
// 2 bad input or usage".
void set_exit_status_help(CLI::App& command, std::string_view success);

void add_report_command(CLI::App& app, int& exit_status);
void add_merge_command(CLI::App& app, int& exit_status);
void add_run_command(CLI::App& app, int& exit_status);
void add_compare_command(CLI::App& app, int& exit_status);
void add_histogram_command(CLI::App& app, int& exit_status);
void add_check_command(CLI::App& app, int& exit_status);
void add_export_command(CLI::App& app, int& exit_status);
void add_tune_command(CLI::App& app, int& exit_status);

// Merges the rank files of `directory` with a progress line when stderr is a terminal, and prints
// what was merged and what the run lost. The rank files are removed after a merge that took every
// rank unless keep_rank_files or COMMLENS_KEEP_RANK_FILES=1. Throws MergeError.
MergeResult merge_with_progress(const std::string& directory, const std::string& output_path,
                                bool keep_rank_files);

} // namespace commlens::cli
