// The training-steps section: step phases (training_steps.hpp) found in `phases`, their calls from
// call_stats (both modes), exact allreduce sizes from mpi_calls (trace mode), and MPI_T samples and
// CUDA copies placed in steps by time on their rank. Overlap, pvar and copy figures are built in
// training_steps_extras.cpp.
#include "commlens/analysis/training_steps.hpp"

#include "commlens/analysis/size_bin.hpp"
#include "report_queries.hpp"
#include "training_steps_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

namespace commlens::analysis {
namespace {

using detail::kStepPhasesSql;

bool is_allreduce(const std::string& name) {
  return name == "MPI_Allreduce" || name == "MPI_Iallreduce" || name == "nccl:AllReduce";
}

// The collectives whose calls carry a step's gradients and parameters: an allreduce per fusion
// bucket (Horovod, DDP), an all-gather and a reduce-scatter per shard (FSDP, ZeRO).
constexpr std::string_view kStepCollectivesSql =
    "('MPI_Allreduce', 'MPI_Iallreduce', 'nccl:AllReduce', 'nccl:AllGather', 'nccl:ReduceScatter', "
    "'nccl:Broadcast', 'nccl:Bcast', 'nccl:Reduce')";

std::int64_t quantile(std::vector<std::int64_t> sorted, double q) {
  const auto at = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(at, sorted.size() - 1)];
}

void read_step_spans(const Database& database, const ReportFilter& filter, TrainingSteps& section,
                     std::map<int, TrainingStep>& steps) {
  auto query = database.prepare(std::string(kStepPhasesSql) +
                                "SELECT phase, rank, start_ns, end_ns FROM steps ORDER BY phase, rank");
  detail::bind_filter(query, filter);
  while (query.step()) {
    const int phase = static_cast<int>(query.integer(0));
    auto [entry, fresh] =
        steps.try_emplace(phase, TrainingStep{.phase = phase, .start_ns = query.integer(2)});
    auto& step = entry->second;
    ++step.ranks;
    step.start_ns = std::min(step.start_ns, query.integer(2));
    step.duration_ns = std::max(step.duration_ns, query.integer(3) - query.integer(2));
    ++section.rank_steps;
  }
}

void read_step_calls(const Database& database, const ReportFilter& filter, TrainingSteps& section,
                     std::map<int, TrainingStep>& steps) {
  auto query = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT c.phase, c.rank, f.name, SUM(c.count), SUM(c.bytes_sent), SUM(c.bytes_recv), SUM(c.time_total_ns)
FROM call_stats c JOIN steps s ON s.rank = c.rank AND s.phase = c.phase JOIN functions f ON f.id = c.function_id
GROUP BY c.phase, c.rank, c.function_id)sql");
  detail::bind_filter(query, filter);
  std::map<std::string, StepFunctionStats> functions;
  std::map<std::string, int> rank_steps_with_calls;
  while (query.step()) {
    auto& step = steps[static_cast<int>(query.integer(0))];
    const auto name = query.text(2);
    const auto calls = static_cast<std::uint64_t>(query.integer(3));
    step.calls += calls;
    step.mpi_ns += query.integer(6); // summed here, divided by the ranks below
    if (is_allreduce(name)) {
      step.allreduce_calls += calls;
      step.allreduce_bytes += static_cast<std::uint64_t>(query.integer(4));
    }
    if (name == "MPI_Pcontrol")
      continue;
    auto& function = functions[name];
    const bool first = rank_steps_with_calls[name]++ == 0;
    function.name = name;
    function.calls += calls;
    function.bytes_sent += static_cast<std::uint64_t>(query.integer(4));
    function.bytes_recv += static_cast<std::uint64_t>(query.integer(5));
    function.time_total_ns += query.integer(6);
    function.min_calls = first ? calls : std::min(function.min_calls, calls);
    function.max_calls = std::max(function.max_calls, calls);
  }
  const double pairs = section.rank_steps;
  for (auto& [name, function] : functions) {
    if (rank_steps_with_calls[name] < section.rank_steps)
      function.min_calls = 0; // some rank made none of these calls in some step
    function.calls_per_step = double(function.calls) / pairs;
    function.bytes_sent_per_step = double(function.bytes_sent) / pairs;
    function.bytes_recv_per_step = double(function.bytes_recv) / pairs;
    function.time_per_step_ns = double(function.time_total_ns) / pairs;
    section.functions.push_back(function);
  }
  std::stable_sort(section.functions.begin(), section.functions.end(),
                   [](const auto& a, const auto& b) { return a.time_total_ns > b.time_total_ns; });
}

void read_collective_sizes(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  auto query = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT f.name, c.size_bin, SUM(c.count), SUM(MAX(c.bytes_sent, c.bytes_recv)), SUM(c.time_total_ns)
FROM call_stats c JOIN steps s ON s.rank = c.rank AND s.phase = c.phase JOIN functions f ON f.id = c.function_id
WHERE f.name IN )sql" + std::string(kStepCollectivesSql) +
                                " GROUP BY f.name, c.size_bin ORDER BY f.name, c.size_bin");
  detail::bind_filter(query, filter);
  const double pairs = section.rank_steps;
  while (query.step()) {
    const int bin = static_cast<int>(query.integer(1));
    section.collective_sizes.push_back({.function = query.text(0),
                                        .size_bin = bin,
                                        .key = size_bin_key(bin),
                                        .label = size_bin_label(bin),
                                        .calls_per_step = double(query.integer(2)) / pairs,
                                        .bytes_per_step = double(query.integer(3)) / pairs,
                                        .time_per_step_ns = double(query.integer(4)) / pairs});
  }
}

// Each fusion bucket or shard is one call of its exact size: listed per bin, "2 x 1448 B, 1 x 1920 B".
void read_exact_collective_sizes(const Database& database, const ReportFilter& filter,
                                 TrainingSteps& section) {
  auto query = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT f.name, MAX(m.bytes_sent, m.bytes_recv) AS size, COUNT(*)
FROM mpi_calls m JOIN steps s ON s.rank = m.rank AND s.phase = m.phase JOIN functions f ON f.id = m.function_id
WHERE f.name IN )sql" + std::string(kStepCollectivesSql) +
                                " GROUP BY f.name, size ORDER BY f.name, size");
  detail::bind_filter(query, filter);
  section.exact_sizes = true;
  while (query.step()) {
    const auto bytes = static_cast<std::uint64_t>(query.integer(1));
    const int bin = bytes == 0 ? kZeroBytesBin : static_cast<int>(std::bit_width(bytes)) - 1;
    const auto name = query.text(0);
    for (auto& entry : section.collective_sizes)
      if (entry.function == name && entry.size_bin == bin)
        entry.exact_sizes +=
            fmt::format("{}{} x {} B", entry.exact_sizes.empty() ? "" : ", ",
                        detail::per_step_count(double(query.integer(2)) / double(section.rank_steps)), bytes);
  }
}

void summarise_step_times(TrainingSteps& section) {
  std::vector<std::int64_t> durations;
  std::vector<std::int64_t> mpi;
  for (const auto& step : section.steps) {
    durations.push_back(step.duration_ns);
    mpi.push_back(step.mpi_ns);
  }
  std::sort(durations.begin(), durations.end());
  std::sort(mpi.begin(), mpi.end());
  section.min_ns = durations.front();
  section.max_ns = durations.back();
  section.median_ns = quantile(durations, 0.5);
  section.p25_ns = quantile(durations, 0.25);
  section.p75_ns = quantile(durations, 0.75);
  section.median_mpi_ns = quantile(mpi, 0.5);
  section.warmup_steps = section.steps.size() >= 3 ? 1 : 0;
  std::int64_t steady_step_ns = 0;
  std::int64_t steady_mpi_ns = 0;
  for (std::size_t i = static_cast<std::size_t>(section.warmup_steps); i < section.steps.size(); ++i) {
    steady_step_ns += section.steps[i].duration_ns;
    steady_mpi_ns += section.steps[i].mpi_ns;
  }
  section.mpi_share = steady_step_ns > 0 ? double(steady_mpi_ns) / double(steady_step_ns) : 0.0;
}

std::string steps_marked_by(const Database& database) {
  auto pcontrol = database.prepare("SELECT 1 FROM call_stats c JOIN functions f ON f.id = c.function_id "
                                   "WHERE f.name = 'MPI_Pcontrol' LIMIT 1");
  if (pcontrol.step())
    return "MPI_Pcontrol(2)";
  auto marks = database.prepare("SELECT value FROM run WHERE key = 'step_marks' AND value NOT LIKE 'off%'");
  return marks.step() ? marks.text(0) : std::string("phases opened at level 2");
}

} // namespace

TrainingSteps query_training_steps(const Database& database, const ReportFilter& filter) {
  TrainingSteps section;
  std::map<int, TrainingStep> steps;
  read_step_spans(database, filter, section, steps);
  if (steps.empty()) {
    section.absent =
        "no step phases (MPI_Pcontrol(2) at the start of each step and once after the last, or an "
        "NVTX range named step around each step)";
    return section;
  }
  section.marked_by = steps_marked_by(database);
  read_step_calls(database, filter, section, steps);
  for (auto& [phase, step] : steps) {
    step.mpi_ns /= std::max(step.ranks, 1);
    section.steps.push_back(step);
  }
  summarise_step_times(section);
  read_collective_sizes(database, filter, section);
  if (database.has_rows("mpi_calls"))
    read_exact_collective_sizes(database, filter, section);
  detail::read_step_gpu(database, filter, section);
  if (database.has_rows("mpi_requests"))
    detail::read_step_overlap(database, filter, section);
  detail::read_step_pvars(database, filter, section);
  detail::read_step_copies(database, filter, section);
  return section;
}

} // namespace commlens::analysis
