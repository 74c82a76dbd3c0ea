// Communication not overlapped with compute in training steps, read from the training-steps model.
// Where kernels were recorded in some steps (COMMLENS_KERNELS=steps), the GPU's own figure: the
// communication kernels' time while no compute kernel ran. Otherwise the host's view: the blocking
// collectives a step waits in, plus the part of its nonblocking allreduces' pending time spent
// inside MPI calls (waiting for them) rather than computing.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <set>
#include <string_view>

namespace commlens::analysis::detail {
namespace {

const std::set<std::string> kBlockingCollectives = {
    "MPI_Allreduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Allgather", "MPI_Allgatherv",     "MPI_Bcast",
    "MPI_Reduce",    "MPI_Alltoall",       "MPI_Alltoallv",
    "MPI_Barrier",   "MPI_Gather",         "MPI_Scatter"};

// The GPU breakdown's exposed communication per step, with its evidence.
double gpu_exposed(const TrainingSteps& steps, std::vector<std::string>& lines) {
  const auto communication = double(steps.median_gpu_communication_ns);
  lines.push_back(fmt::format(
      "on the GPU, steps {}: communication kernels {} per step, {} of it while compute "
      "kernels ran ({}), {} alone; compute {}",
      steps.gpu_steps, human_duration(communication), human_duration(double(steps.median_gpu_overlapped_ns)),
      format_value(communication > 0 ? steps.median_gpu_overlapped_ns / communication : 0.0, Unit::Share),
      human_duration(double(steps.median_gpu_exposed_ns)),
      human_duration(double(steps.median_gpu_compute_ns))));
  return double(steps.median_gpu_exposed_ns);
}

// The host's view: time in blocking collectives and in waits for nonblocking allreduces.
double host_exposed(const TrainingSteps& steps, std::vector<std::string>& lines) {
  double blocking_ns = 0; // per step and rank
  for (const auto& function : steps.functions)
    if (kBlockingCollectives.contains(function.name) && function.time_per_step_ns > 0) {
      blocking_ns += function.time_per_step_ns;
      lines.push_back(fmt::format("{} blocks {} per step and rank ({} call{})", function.name,
                                  human_duration(function.time_per_step_ns),
                                  format_value(function.calls_per_step, Unit::Count),
                                  function.calls_per_step == 1.0 ? "" : "s"));
    }
  double waited_ns = 0;
  if (steps.nonblocking_allreduce) {
    waited_ns = steps.in_flight_ns - steps.in_flight_outside_mpi_ns;
    lines.push_back(fmt::format(
        "nonblocking allreduces pending {} per step and rank, {} of it hidden behind "
        "compute ({})",
        human_duration(steps.in_flight_ns), human_duration(steps.in_flight_outside_mpi_ns),
        format_value(steps.in_flight_ns > 0 ? steps.in_flight_outside_mpi_ns / steps.in_flight_ns : 0.0,
                     Unit::Share)));
  }
  return blocking_ns + waited_ns;
}

bool steps_call(const TrainingSteps& steps, std::string_view name) {
  return std::ranges::any_of(steps.functions,
                             [&](const StepFunctionStats& function) { return function.name == name; });
}

// What to try depends on how the steps communicate: FSDP's all-gathers, DDP's allreduces over NCCL,
// or MPI collectives a trainer calls itself.
std::string advice_for(const TrainingSteps& steps) {
  if (steps_call(steps, "nccl:AllGather") || steps_call(steps, "nccl:ReduceScatter"))
    return "Let FSDP fetch the next unit's parameters while the current one computes "
           "(forward_prefetch=True, backward_prefetch=BACKWARD_PRE); larger units (a coarser "
           "auto_wrap_policy) mean fewer, longer all-gathers; gradient accumulation with no_sync() "
           "reduce-scatters once per several steps.";
  if (steps_call(steps, "nccl:AllReduce"))
    return "DDP overlaps each bucket's allreduce with the rest of the backward pass; what stays exposed "
           "is mostly the last buckets. Try a smaller bucket_cap_mb so the last bucket is small, "
           "gradient_as_bucket_view=True, and gradient accumulation with no_sync() to allreduce once "
           "per several steps.";
  return "Start each gradient bucket's allreduce as soon as its gradients are ready (MPI_Iallreduce "
         "during the backward pass, as DDP and Horovod do) and wait just before the optimizer needs "
         "them; fewer, larger buckets also cut per-call latency.";
}

// The step after the warm-up that spent the longest in communication (on the GPU where its kernels
// were recorded, in MPI and NCCL calls otherwise), for the timeline.
std::optional<TimelinePlace> longest_communication_step(const TrainingSteps& steps, bool gpu) {
  const auto communication = [gpu](const TrainingStep& step) -> std::int64_t {
    return gpu ? (step.gpu_ranks > 0 ? step.gpu_exposed_ns : -1) : step.mpi_ns;
  };
  const TrainingStep* longest = nullptr;
  for (auto step =
           steps.steps.begin() + std::min<std::ptrdiff_t>(steps.warmup_steps, std::ssize(steps.steps));
       step != steps.steps.end(); ++step)
    if (communication(*step) >= 0 && (!longest || communication(*step) > communication(*longest)))
      longest = &*step;
  if (!longest)
    return std::nullopt;
  return TimelinePlace{longest->start_ns, longest->start_ns + longest->duration_ns, {}, ""};
}

} // namespace

void find_exposed_communication(const FindingContext& context, FindingsSection& section) {
  const auto& steps = context.report.training_steps;
  if (!steps.absent.empty() || steps.steps.empty() || steps.median_ns <= 0)
    return;
  if (steps.gpu_steps.empty() && std::ranges::any_of(steps.functions, [](const StepFunctionStats& function) {
        return function.name.starts_with("nccl:");
      }))
    section.not_analysed.push_back(fmt::format(
        "exposed communication of NCCL in the steps: NCCL's kernels run on the GPU{}, and without kernel "
        "records the host cannot tell how much of that compute hid; COMMLENS_KERNELS=steps records the "
        "kernels of steps 6-8 to measure it",
        steps.median_nccl_gpu_ns > 0
            ? fmt::format(" ({} per step)", human_duration(double(steps.median_nccl_gpu_ns)))
            : ""));
  std::vector<std::string> lines;
  const double exposed_ns = steps.gpu_steps.empty() ? host_exposed(steps, lines) : gpu_exposed(steps, lines);
  const double measured = exposed_ns / double(steps.median_ns);
  if (!reaches_threshold("exposed-communication", measured))
    return;
  auto finding = make_finding(context, "exposed-communication", "steps",
                              static_cast<std::int64_t>(exposed_ns * steps.rank_steps), measured);
  finding.title =
      fmt::format("Communication the steps wait for: {} of a {} step, not overlapped with compute",
                  human_duration(exposed_ns), human_duration(double(steps.median_ns)));
  finding.evidence = std::move(lines);
  finding.evidence.push_back(fmt::format("{} steps, {} rank-steps", steps.steps.size(), steps.rank_steps));
  finding.query =
      "SELECT phase, f.name, SUM(time_total_ns) / COUNT(DISTINCT rank) AS time_per_rank_ns FROM "
      "call_stats c JOIN functions f ON f.id = c.function_id WHERE f.family = 'collective' GROUP BY "
      "phase, f.name ORDER BY phase";
  finding.view = "Steps: communication against compute per step";
  finding.timeline = longest_communication_step(steps, !steps.gpu_steps.empty());
  finding.advice = advice_for(steps);
  section.findings.push_back(std::move(finding));
}

} // namespace commlens::analysis::detail
