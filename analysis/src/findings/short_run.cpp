// Start-up or tear-down dominating a short run: when MPI_Init and MPI_Finalize take most of the
// ranks' time, every other figure describes a few moments of the program, not its behaviour.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {

void find_short_run(const FindingContext& context, FindingsSection& section) {
  const auto& report = context.report;
  if (report.filter.phase || report.filter.nvtx_range || context.ranks_time_ns <= 0)
    return; // a phase's share says nothing about the run's length
  std::int64_t init_ns = 0, finalize_ns = 0;
  for (const auto& function : report.functions) {
    if (function.name == "MPI_Init" || function.name == "MPI_Init_thread")
      init_ns += function.time_total_ns;
    if (function.name == "MPI_Finalize")
      finalize_ns += function.time_total_ns;
  }
  const double measured = double(init_ns + finalize_ns) / double(context.ranks_time_ns);
  if (!reaches_threshold("startup-teardown", measured))
    return;
  const double ranks = double(std::max<std::size_t>(report.ranks.size(), 1));
  auto finding = make_finding(context, "startup-teardown", "run", init_ns + finalize_ns, measured);
  finding.title =
      fmt::format("Start-up and tear-down take {} of this short run", format_value(measured, Unit::Share));
  finding.evidence = {
      fmt::format("per rank: MPI_Init {}, MPI_Finalize {}, of {} from MPI_Init to MPI_Finalize",
                  human_duration(double(init_ns) / ranks), human_duration(double(finalize_ns) / ranks),
                  human_duration(double(context.ranks_time_ns) / ranks))};
  finding.query =
      "SELECT c.rank, f.name, SUM(c.time_total_ns) AS time_ns FROM call_stats c JOIN functions f ON f.id "
      "= c.function_id WHERE f.name IN ('MPI_Init', 'MPI_Init_thread', 'MPI_Finalize') GROUP BY 1, 2";
  finding.view = "Timeline: the whole run";
  finding.timeline = TimelinePlace{};
  finding.advice = "Profile a longer run (more iterations or steps), or mark the part that matters with "
                   "MPI_Pcontrol(2) and read that phase alone (commlens report --phase N).";
  section.findings.push_back(std::move(finding));
}

} // namespace commlens::analysis::detail
