// Where the GPU's time went in each training step (training_steps.hpp): the kernels, copies and
// memsets of each rank, placed in its steps by start time and clipped to them, in one pass over
// all of them in time order. A kernel is communication when it is NCCL's (its name, mangled or not,
// holds ncclDevKernel or ncclKernel) or an MPI or NCCL call launched it (mpi_call_id: the GPU
// runtime's kernels); every other kernel computes.
// Only steps inside a span of kernel_recording have a breakdown; databases without that table's
// rows recorded every kernel. The NCCL calls' GPU time per step comes from device_span_stats.
#include "commlens/analysis/statement.hpp"
#include "gpu/copy_timing.hpp"
#include "report_queries.hpp"
#include "time_intervals.hpp"
#include "training_steps_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace commlens::analysis::detail {
namespace {

struct RankStep {
  std::int64_t rank = 0;
  int phase = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool recorded = false;
  Intervals compute{}, communication{}, busy{};
};

std::vector<RankStep> read_rank_steps(const Database& database, const ReportFilter& filter) {
  auto query = database.prepare(std::string(kStepPhasesSql) +
                                "SELECT rank, phase, start_ns, end_ns FROM steps ORDER BY rank, start_ns");
  bind_filter(query, filter);
  std::vector<RankStep> steps;
  while (query.step())
    steps.push_back({.rank = query.integer(0),
                     .phase = static_cast<int>(query.integer(1)),
                     .start_ns = query.integer(2),
                     .end_ns = query.integer(3)});
  return steps;
}

// The CUDA collector switches kernel records on and off in the phase boundary's own call, a few
// microseconds after the boundary's timestamp: a span that starts this close after a step's start
// (at most 1 ms, and at most 1% of the step) covers it.
constexpr std::int64_t kSwitchDelayNs = 1'000'000;

std::int64_t switch_delay(const RankStep& step) {
  return std::min(kSwitchDelayNs, (step.end_ns - step.start_ns) / 100);
}

// Marks the steps that lie inside a span in which the rank's kernels were recorded.
void mark_recorded(const Database& database, std::vector<RankStep>& steps) {
  if (!database.has_rows("kernel_recording")) {
    for (auto& step : steps)
      step.recorded = true; // a database of a version that recorded every kernel
    return;
  }
  auto query = database.prepare("SELECT rank, start_ns, end_ns FROM kernel_recording");
  std::map<std::int64_t, Intervals> spans;
  while (query.step())
    spans[query.integer(0)].emplace_back(query.integer(1), query.integer(2));
  for (auto& step : steps)
    for (const auto& [start, end] : spans[step.rank])
      step.recorded = step.recorded || (start <= step.start_ns + switch_delay(step) && end >= step.end_ns);
}

// Every kernel, copy and memset of the ranks, in time order per rank: kind 0 compute, 1
// communication, 2 a copy or memset. Databases of older versions may lack the copy and memset tables.
std::string gpu_work_sql(const Database& database) {
  std::string sql =
      "SELECT rank, start_ns, end_ns, CASE WHEN instr(name, 'ncclDevKernel') > 0 OR "
      "instr(name, 'ncclKernel') > 0 OR mpi_call_id IS NOT NULL THEN 1 ELSE 0 END FROM cuda_kernels "
      "WHERE ?1 IS NULL OR rank = ?1";
  // Copies not timed on the GPU (copy_timing.hpp) carry host times: not GPU work.
  for (const char* table : {"cuda_copies", "cuda_memsets"})
    if (database.has_table(table))
      sql += fmt::format(
          " UNION ALL SELECT rank, start_ns, end_ns, 2 FROM {} WHERE (?1 IS NULL OR rank = ?1) AND {}", table,
          ran_on_gpu_clock(database, table));
  return sql + " ORDER BY 1, 2";
}

void place_gpu_work(const Database& database, const ReportFilter& filter, std::vector<RankStep>& steps) {
  auto query = database.prepare(gpu_work_sql(database));
  query.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  std::size_t next = 0; // steps are in (rank, start) order, as the work
  while (query.step()) {
    const std::int64_t rank = query.integer(0), start = query.integer(1);
    while (next < steps.size() &&
           (steps[next].rank < rank || (steps[next].rank == rank && steps[next].end_ns <= start)))
      ++next;
    if (next == steps.size())
      break;
    RankStep& step = steps[next];
    if (step.rank != rank || start < step.start_ns || !step.recorded)
      continue;
    const std::pair<std::int64_t, std::int64_t> clipped{start, std::min(query.integer(2), step.end_ns)};
    step.busy.push_back(clipped);
    if (const auto kind = query.integer(3); kind == 0)
      step.compute.push_back(clipped);
    else if (kind == 1)
      step.communication.push_back(clipped);
  }
}

void add_breakdowns(const std::vector<RankStep>& rank_steps, TrainingSteps& section) {
  std::map<int, TrainingStep*> by_phase;
  for (auto& step : section.steps)
    by_phase[step.phase] = &step;
  for (const auto& rank_step : rank_steps) {
    const auto found = by_phase.find(rank_step.phase);
    if (!rank_step.recorded || found == by_phase.end())
      continue;
    TrainingStep& step = *found->second;
    const auto compute = merged(rank_step.compute);
    const auto communication = merged(rank_step.communication);
    const std::int64_t overlapped = overlap(compute, communication);
    ++step.gpu_ranks;
    step.gpu_compute_ns += length(compute);
    step.gpu_communication_ns += length(communication);
    step.gpu_overlapped_ns += overlapped;
    step.gpu_exposed_ns += length(communication) - overlapped;
    step.gpu_idle_ns += (rank_step.end_ns - rank_step.start_ns) - length(merged(rank_step.busy));
  }
  for (auto& step : section.steps)
    if (step.gpu_ranks > 0)
      for (std::int64_t* figure : {&step.gpu_compute_ns, &step.gpu_communication_ns, &step.gpu_overlapped_ns,
                                   &step.gpu_exposed_ns, &step.gpu_idle_ns})
        *figure /= step.gpu_ranks;
}

void read_nccl_gpu_time(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  if (!database.has_rows("device_span_stats"))
    return;
  auto per_step = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT d.phase, SUM(d.time_total_ns) FROM device_span_stats d JOIN steps s ON s.rank = d.rank AND s.phase = d.phase
GROUP BY d.phase)sql");
  bind_filter(per_step, filter);
  std::map<int, std::int64_t> totals;
  while (per_step.step())
    totals[static_cast<int>(per_step.integer(0))] = per_step.integer(1);
  for (auto& step : section.steps)
    step.nccl_gpu_ns = totals[step.phase] / std::max(step.ranks, 1);
  auto per_size = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT f.name, d.size_bin, SUM(d.time_total_ns) FROM device_span_stats d
  JOIN steps s ON s.rank = d.rank AND s.phase = d.phase JOIN functions f ON f.id = d.function_id
GROUP BY f.name, d.size_bin)sql");
  bind_filter(per_size, filter);
  while (per_size.step())
    for (auto& entry : section.collective_sizes)
      if (entry.function == per_size.text(0) && entry.size_bin == per_size.integer(1))
        entry.gpu_time_per_step_ns = double(per_size.integer(2)) / double(section.rank_steps);
}

std::int64_t median_of(std::vector<std::int64_t> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// "6-8" for the steps with a breakdown (numbered from 1 in step order).
std::string steps_with_breakdown(const TrainingSteps& section) {
  std::string text;
  std::size_t i = 0;
  while (i < section.steps.size()) {
    if (section.steps[i].gpu_ranks == 0) {
      ++i;
      continue;
    }
    std::size_t last = i;
    while (last + 1 < section.steps.size() && section.steps[last + 1].gpu_ranks > 0)
      ++last;
    text += (text.empty() ? "" : ",") +
            (last == i ? fmt::format("{}", i + 1) : fmt::format("{}-{}", i + 1, last + 1));
    i = last + 1;
  }
  return text;
}

void summarise(const Database& database, TrainingSteps& section) {
  std::vector<std::int64_t> compute, communication, overlapped, exposed, idle, nccl;
  for (std::size_t i = static_cast<std::size_t>(section.warmup_steps); i < section.steps.size(); ++i) {
    const auto& step = section.steps[i];
    nccl.push_back(step.nccl_gpu_ns);
    if (step.gpu_ranks == 0)
      continue;
    compute.push_back(step.gpu_compute_ns);
    communication.push_back(step.gpu_communication_ns);
    overlapped.push_back(step.gpu_overlapped_ns);
    exposed.push_back(step.gpu_exposed_ns);
    idle.push_back(step.gpu_idle_ns);
  }
  section.median_gpu_compute_ns = median_of(compute);
  section.median_gpu_communication_ns = median_of(communication);
  section.median_gpu_overlapped_ns = median_of(overlapped);
  section.median_gpu_exposed_ns = median_of(exposed);
  section.median_gpu_idle_ns = median_of(idle);
  section.median_nccl_gpu_ns = median_of(nccl);
  section.gpu_steps = steps_with_breakdown(section);
  if (!section.gpu_steps.empty())
    return;
  auto chosen = database.prepare("SELECT value FROM run WHERE key = 'cuda_kernels'");
  const std::string kernels = chosen.step() ? chosen.text(0) : "";
  if (kernels.starts_with("none")) {
    section.gpu_absent =
        "kernels were not recorded (COMMLENS_KERNELS=off, the default); COMMLENS_KERNELS=steps "
        "records those of steps 6-8 (COMMLENS_KERNEL_STEPS), at a cost for the rest of the run";
  } else if (!database.has_rows("cuda_kernels") && !database.has_rows("kernel_recording")) {
    section.gpu_absent = "no kernels recorded (the CUDA collector was off)";
  } else {
    section.gpu_absent = fmt::format("kernels were recorded in no step of {} (kernels recorded: {})",
                                     section.steps.size(), kernels.empty() ? "unknown" : kernels);
  }
}

} // namespace

void read_step_gpu(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  read_nccl_gpu_time(database, filter, section);
  if (database.has_rows("cuda_kernels")) {
    auto rank_steps = read_rank_steps(database, filter);
    mark_recorded(database, rank_steps);
    place_gpu_work(database, filter, rank_steps);
    add_breakdowns(rank_steps, section);
  }
  summarise(database, section);
}

} // namespace commlens::analysis::detail
