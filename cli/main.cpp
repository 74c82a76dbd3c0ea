// commlens: the command-line front end of the analysis layer and the launcher.
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "subcommand_suggestion.hpp"

#include <fmt/format.h>

#include <exception>

namespace {

constexpr const char* kOverviewHelp = R"(Each subcommand has its own --help with its options and exit status:
  commlens report --help
Exit status: 0 success (`commlens run` returns the profiled command's own); 1 `commlens check` found
a regression; 2 bad input or usage.

The same data in a window: commlens-viewer [DATABASE] (timeline, steps, histograms, partners, copy
paths). The database is plain SQLite: sqlite3 DATABASE, or Python's sqlite3 and pandas.
)";

} // namespace

namespace commlens::cli {

void set_exit_status_help(CLI::App& command, std::string_view success) {
  command.footer(
      fmt::format("Exit status:\n  0  {}\n  2  bad input or usage: an unknown option, an unreadable, "
                  "truncated, corrupt\n     or too new database, a run with zero events or missing "
                  "ranks",
                  success));
}

} // namespace commlens::cli

int main(int argc, char** argv) {
  CLI::App app{"commlens: MPI + CUDA + NCCL communication profiler"};
  app.set_version_flag("--version", std::string("commlens ") + COMMLENS_VERSION);
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
  // After the subcommands, which would otherwise inherit it.
  app.footer(kOverviewHelp);

  if (const auto suggestion = commlens::cli::unknown_subcommand_message(app, argc, argv)) {
    fmt::print(stderr, "{}\n", *suggestion);
    return commlens::cli::kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Help and version requests are "errors" with status 0; every real parse error is a usage error.
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
