// `commlens export DB --format chrome [-o trace.json]` and `commlens export DB --format csv -o DIR`
#include "analyse/analysis_input.hpp"
#include "commands.hpp"
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/trace_export.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

namespace commlens::cli {
namespace {

struct ExportArguments {
  std::string database;
  std::string format;
  std::string output;
  bool allow_missing_ranks = false;
};

void export_chrome(const analysis::Database& database, const std::string& output) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (!output.empty()) {
    file.reset(std::fopen(output.c_str(), "w"));
    if (!file)
      throw analysis::AnalysisError(output + ": cannot create file");
  }
  const auto counts = analysis::export_chrome_trace(database, file ? file.get() : stdout);
  if (file && std::fflush(file.get()) != 0)
    throw analysis::AnalysisError(output + ": write failed");
  fmt::print(stderr,
             "commlens: exported {} calls, {} send->receive arrows, {} CUDA copies, {} kernels and {} NVTX "
             "ranges{}\n",
             counts.calls, counts.flows, counts.copies, counts.kernels, counts.nvtx_ranges,
             output.empty() ? "" : " to " + output);
}

} // namespace

void add_export_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<ExportArguments>();
  auto* command = app.add_subcommand(
      "export", "Export a database: a Chrome/Perfetto trace (trace mode) or one CSV file per table");
  command->add_option("database", arguments->database, "commlens.sqlite, or the run's output directory")
      ->required();
  command->add_option("--format", arguments->format, "chrome or csv")
      ->required()
      ->check(CLI::IsMember({"chrome", "csv"}));
  command->add_option("-o,--output", arguments->output,
                      "chrome: the JSON file (default stdout); csv: the directory");
  add_allow_missing_ranks_flag(*command, arguments->allow_missing_ranks);
  set_exit_status_help(*command, "exported");
  command->callback([arguments, &exit_status] {
    const auto database = open_for_analysis(arguments->database, arguments->allow_missing_ranks);
    if (arguments->format == "chrome") {
      export_chrome(database, arguments->output);
    } else {
      if (arguments->output.empty())
        throw analysis::AnalysisError("export --format csv needs -o DIRECTORY");
      const int tables = analysis::export_csv_tables(database, arguments->output);
      fmt::print(stderr, "commlens: wrote {} tables to {}\n", tables, arguments->output);
    }
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
