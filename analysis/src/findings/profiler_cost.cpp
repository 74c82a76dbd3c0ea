// The profile slowing the steps it measures: commlens's own time per step on the threads that copy
// (its part of each CUDA runtime call it records, the profiler_overhead row cuda_runtime_calls,
// times the copies per step and rank), against the median step. Its threshold is summary mode's
// budget: beyond it the figures describe a slower program than the one that runs unprofiled.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

namespace commlens::analysis::detail {

void find_profiler_cost(const FindingContext& context, FindingsSection& section) {
  const auto& steps = context.report.training_steps;
  if (!steps.absent.empty() || steps.median_ns <= 0 || steps.profiler_ns_per_step <= 0)
    return;
  const double own_ns = steps.profiler_ns_per_step;
  const double measured = own_ns / double(steps.median_ns);
  if (!reaches_threshold("profiler-cost", measured))
    return;
  auto finding = make_finding(context, "profiler-cost", "steps",
                              static_cast<std::int64_t>(own_ns * steps.rank_steps), measured);
  finding.title = fmt::format("commlens itself takes {} of a {} step on the threads that copy",
                              human_duration(own_ns), human_duration(double(steps.median_ns)));
  finding.evidence = {
      fmt::format("{:.0f} copies per step and rank, {} of commlens's time a CUDA runtime call "
                  "(timed on one call in 16)",
                  steps.copies_per_step, human_duration(double(steps.profiler_ns_per_call)))};
  finding.query = "SELECT rank, count, time_ns, time_ns / count AS ns_per_call FROM profiler_overhead "
                  "WHERE component = 'cuda_runtime_calls'";
  finding.view = "Steps: commlens on the copying threads";
  finding.advice = "Each copy the program makes through the CUDA runtime is recorded. DDP copies every "
                   "gradient into its bucket and back; DistributedDataParallel(gradient_as_bucket_view=True) "
                   "avoids those copies. To see the communication alone, profile with --collectors "
                   "pmpi,mpit,nvtx (no copies and no NCCL GPU time).";
  section.findings.push_back(std::move(finding));
}

} // namespace commlens::analysis::detail
