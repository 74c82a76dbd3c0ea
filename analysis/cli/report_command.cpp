// `commlens report DB [--rank R] [--phase P] [--format text|json]`
#include "commands.hpp"
#include "commlens/analysis/report_format.hpp"

#include <fmt/format.h>

namespace commlens::cli {
namespace {

struct ReportArguments {
  std::string database;
  int rank = 0;
  int phase = 0;
  std::string format = "text";
};

} // namespace

void add_report_command(CLI::App& app, int& exit_status) {
  auto arguments = std::make_shared<ReportArguments>();
  auto* command = app.add_subcommand("report", "Summarize a commlens database: time in MPI per rank, "
                                               "calls/bytes/time per function, message-size histograms");
  command->add_option("database", arguments->database, "commlens.sqlite or a rank file")->required();
  auto* rank = command->add_option("--rank", arguments->rank, "Only this world rank");
  auto* phase = command->add_option("--phase", arguments->phase, "Only this MPI_Pcontrol phase");
  command->add_option("--format", arguments->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  command->callback([arguments, rank, phase, &exit_status] {
    analysis::ReportFilter filter;
    if (*rank)
      filter.rank = arguments->rank;
    if (*phase)
      filter.phase = arguments->phase;
    const analysis::Database database(arguments->database);
    const auto report = analysis::build_report(database, filter);
    const auto rendered = arguments->format == "json" ? analysis::render_json_report(report)
                                                      : analysis::render_text_report(report);
    fmt::print("{}", rendered);
    exit_status = kSuccess;
  });
}

} // namespace commlens::cli
