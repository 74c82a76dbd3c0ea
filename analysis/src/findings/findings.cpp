#include "findings_engine.hpp"

#include "../names/function_names.hpp"

#include <algorithm>

namespace commlens::analysis::detail {
namespace {

std::int64_t ranks_time(const Report& report, std::string& base) {
  std::int64_t application = 0, mpi = 0;
  for (const auto& rank : report.ranks) {
    application += rank.application_ns.value_or(0);
    mpi += rank.mpi_ns;
  }
  if (application > 0) {
    base = report.filter.phase ? "the ranks' time in the phase" : "the ranks' time";
    return application;
  }
  base = "the ranks' time in MPI";
  return mpi;
}

} // namespace

std::string FindingContext::function_name(int function_id) const {
  const auto found = function_names.find(function_id);
  return found == function_names.end() ? "function " + std::to_string(function_id) : found->second;
}

std::string count_of(std::uint64_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

double FindingContext::share_of_ranks_time(double time_ns) const {
  return ranks_time_ns > 0 ? time_ns / double(ranks_time_ns) : 0.0;
}

std::int64_t FindingContext::waiting_in(int function_id) const {
  std::int64_t total = 0;
  if (wait_states)
    for (const auto& bucket : wait_states->buckets)
      if (bucket.function_id == function_id)
        total += bucket.wait_ns;
  return total;
}

bool reaches_threshold(std::string_view rule, double measured) {
  return measured >= finding_rule(rule).threshold;
}

Finding make_finding(const FindingContext& context, std::string_view rule, const std::string& subject,
                     std::int64_t cost_ns, double measured) {
  const auto& known = finding_rule(rule);
  Finding finding;
  finding.id = std::string(rule) + "@" + subject;
  finding.rule = rule;
  finding.cost_ns = cost_ns;
  finding.cost_base = context.ranks_time_base;
  finding.cost_share = context.share_of_ranks_time(double(cost_ns));
  finding.measure = known.measure;
  finding.measured = measured;
  finding.threshold = known.threshold;
  finding.unit = known.unit;
  return finding;
}

FindingsSection find_findings(const Database& database, const Report& report) {
  std::string base;
  const auto time = ranks_time(report, base);
  FindingContext context{
      database, report,      CommunicatorNames(database), query_function_names(database), time,
      base,     std::nullopt};
  if (report.trace_mode)
    context.wait_states = find_wait_states(database, report.filter);
  FindingsSection section;
  // A run that is mostly MPI_Init and MPI_Finalize is too short for rules that weigh time: a rank
  // descheduled for a few milliseconds would read as a wait or an imbalance. Its counts still say
  // something (queues, churn).
  find_short_run(context, section);
  const bool too_short = !section.findings.empty();
  if (too_short)
    section.not_analysed.push_back(
        "waits, imbalance, message storms, copy paths, steps and the GPU runtime: the "
        "run is too short to weigh them (start-up and tear-down take most of it)");
  else
    for (const auto rules :
         {find_wait_state_problems, find_load_imbalance, find_small_message_storms, find_gpu_copy_problems,
          find_exposed_communication, find_runtime_savings, find_profiler_cost})
      rules(context, section);
  find_unexpected_queues(context, section);
  find_churn(context, section);
  // Most cost first; the id breaks ties so that the order is the same from run to run.
  std::sort(section.findings.begin(), section.findings.end(), [](const Finding& a, const Finding& b) {
    return a.cost_ns != b.cost_ns ? a.cost_ns > b.cost_ns : a.id < b.id;
  });
  return section;
}

} // namespace commlens::analysis::detail
