// commlens: the command-line front end of the analysis layer and the launcher.
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"

#include <fmt/format.h>

#include <exception>

namespace {

constexpr const char* kExitStatusHelp = R"(Exit status:
  0  success (`commlens run` returns the profiled command's own status)
  1  `commlens check`: a regression against the baseline (new function or size bin, a bin or
     function gone, calls or bytes changed beyond --tolerance)
  2  bad input or usage: unknown option, unreadable, truncated, corrupt or too new database, a run
     with zero events, a bad baseline, failed merge; `commlens tune` without a GPU)";

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"commlens: MPI + CUDA communication profiler"};
  app.footer(kExitStatusHelp);
  app.require_subcommand(1);

  int exit_status = commlens::cli::kSuccess;
  commlens::cli::add_run_command(app, exit_status);
  commlens::cli::add_report_command(app, exit_status);
  commlens::cli::add_merge_command(app, exit_status);
  commlens::cli::add_compare_command(app, exit_status);
  commlens::cli::add_histogram_command(app, exit_status);
  commlens::cli::add_check_command(app, exit_status);
  commlens::cli::add_export_command(app, exit_status);
  commlens::cli::add_tune_command(app, exit_status);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Help requests are "errors" with status 0; every real parse error is a usage error.
    const int status = app.exit(error);
    return status == 0 ? commlens::cli::kSuccess : commlens::cli::kBadInput;
  } catch (const commlens::analysis::AnalysisError& error) {
    fmt::print(stderr, "commlens: error: {}\n", error.what());
    return commlens::cli::kBadInput;
  } catch (const commlens::MergeError& error) {
    fmt::print(stderr, "commlens: merge failed: {}\n", error.what());
    return commlens::cli::kBadInput;
  } catch (const std::exception& error) {
    fmt::print(stderr, "commlens: error: {}\n", error.what());
    return commlens::cli::kBadInput;
  }
  return exit_status;
}
