// MPI_T samples and CUDA copies inside the training steps, placed by time on their rank.
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/size_bin.hpp"
#include "commlens/analysis/units.hpp"
#include "gpu/copy_timing.hpp"
#include "report_queries.hpp"
#include "training_steps_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace commlens::analysis::detail {
namespace {

// Counters and timers grow for the whole run: what a step did is their growth inside it.
bool accumulates(const std::string& pvar_class) {
  return pvar_class == "counter" || pvar_class == "timer" || pvar_class == "aggregate";
}

struct PvarSeries { // one pvar, communicator and rank inside one step
  double first = 0;
  double last = 0;
  double sum = 0;
  double max = 0;
  int samples = 0;
};

struct PvarSummary {
  std::string pvar_class;
  int samples = 0;
  std::vector<std::pair<double, int>> per_step; // (the step's figure, phase)
};

} // namespace

std::string per_step_count(double value) {
  return format_value(value, Unit::Count);
}

void read_step_pvars(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  if (!database.has_rows("pvar_samples") || !database.has_rows("pvars"))
    return;
  // One value per read: per-peer elements summed (the whole queue).
  auto query = database.prepare(std::string(kStepPhasesSql) + R"sql(
SELECT p.name, p.class, v.comm_id, v.rank, st.phase, SUM(v.value)
FROM pvar_samples v JOIN pvars p ON p.id = v.pvar_id
     JOIN steps st ON st.rank = v.rank AND v.time_ns >= st.start_ns AND v.time_ns < st.end_ns
GROUP BY v.pvar_id, v.comm_id, v.rank, v.time_ns ORDER BY p.name, v.comm_id, v.rank, v.time_ns)sql");
  bind_filter(query, filter);
  std::map<std::tuple<std::string, std::int64_t, std::int64_t, int>, PvarSeries> series;
  std::map<std::string, PvarSummary> pvars;
  while (query.step()) {
    const auto name = query.text(0);
    const double value = query.real(5);
    auto& one = series[{name, query.optional_integer(2).value_or(-1), query.integer(3),
                        static_cast<int>(query.integer(4))}];
    if (one.samples++ == 0)
      one.first = one.max = value;
    one.last = value;
    one.sum += value;
    one.max = std::max(one.max, value);
    pvars[name].pvar_class = query.text(1);
    ++pvars[name].samples;
  }
  for (const auto& [key, one] : series) {
    auto& pvar = pvars[std::get<0>(key)];
    const double figure = accumulates(pvar.pvar_class) ? one.last - one.first : one.max;
    pvar.per_step.emplace_back(figure, std::get<3>(key));
  }
  if (pvars.empty())
    return;
  section.pvar_headers = {"pvar", "class", "samples", "step figure", "mean", "max", "max in phase"};
  for (const auto& [name, pvar] : pvars) {
    double sum = 0;
    auto top = pvar.per_step.front();
    for (const auto& entry : pvar.per_step) {
      sum += entry.first;
      if (entry.first > top.first)
        top = entry;
    }
    section.pvar_rows.push_back({name, pvar.pvar_class, std::to_string(pvar.samples),
                                 accumulates(pvar.pvar_class) ? "growth in step" : "largest in step",
                                 fmt::format("{:.2f}", sum / double(pvar.per_step.size())),
                                 fmt::format("{:.0f}", top.first), std::to_string(top.second)});
  }
}

namespace {

// commlens's own time per CUDA runtime call (profiler_overhead), and per step from the copies per
// step read before it.
void read_profiler_time_per_call(const Database& database, TrainingSteps& section) {
  if (!database.has_rows("profiler_overhead"))
    return;
  auto query = database.prepare("SELECT SUM(time_ns), SUM(count) FROM profiler_overhead "
                                "WHERE component = 'cuda_runtime_calls' AND count > 0");
  if (!query.step())
    return;
  const auto calls = query.optional_integer(1);
  if (!calls || *calls <= 0)
    return;
  section.profiler_ns_per_call = query.integer(0) / *calls;
  section.profiler_ns_per_step = double(section.profiler_ns_per_call) * section.copies_per_step;
}

} // namespace

void read_step_copies(const Database& database, const ReportFilter& filter, TrainingSteps& section) {
  if (!database.has_rows("cuda_copies"))
    return;
  // Time per step is that of the copies timed on the GPU (copy_timing.hpp); so is the bandwidth.
  auto query = database.prepare(std::string(kStepPhasesSql) + fmt::format(R"sql(
SELECT c.path, SUM({}), SUM(c.bytes), COALESCE(SUM({}), 0), COALESCE(SUM({}), 0)
FROM cuda_copies c JOIN steps st ON st.rank = c.rank AND c.start_ns >= st.start_ns AND c.start_ns < st.end_ns
GROUP BY c.path ORDER BY SUM(c.bytes) DESC)sql",
                                                                          copy_count(database, "c."),
                                                                          copy_gpu_ns(database, "c."),
                                                                          copy_timed_bytes(database, "c.")));
  bind_filter(query, filter);
  const double pairs = section.rank_steps;
  while (query.step()) {
    section.copies_per_step += double(query.integer(1)) / pairs;
    const auto bytes = query.integer(2);
    const auto time_ns = query.integer(3);
    const auto timed_bytes = query.integer(4);
    section.copy_rows.push_back(
        {query.text(0), per_step_count(double(query.integer(1)) / pairs),
         binary_size(static_cast<std::uint64_t>(double(bytes) / pairs)),
         human_duration(double(time_ns) / pairs),
         time_ns > 0 ? fmt::format("{:.2f} GB/s", double(timed_bytes) / double(time_ns)) : "-"});
  }
  if (!section.copy_rows.empty())
    section.copy_headers = {"path", "copies per step", "bytes per step", "time per step", "bandwidth"};
  read_profiler_time_per_call(database, section);
}

} // namespace commlens::analysis::detail
