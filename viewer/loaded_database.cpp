#include "loaded_database.hpp"

#include "nccl_call_details.hpp"

#include <algorithm>
#include <limits>

namespace commlens::viewer {

QString LoadedDatabase::function_name(int function_id) const {
  const auto found = function_names.find(function_id);
  return found == function_names.end() ? QStringLiteral("function %1").arg(function_id)
                                       : QString::fromStdString(found->second);
}

bool LoadedDatabase::is_setup_function(const std::string& name) const {
  return setup_functions.contains(name);
}

namespace {

// Set-up is what a run does once, before or after its work: start and end MPI (MPI_Pcontrol marks
// phases and MPI_Abort ends a run: lifecycle calls, but no set-up), build or free communicators.
std::set<std::string> setup_function_names(const std::map<int, std::string>& names,
                                           const std::map<int, std::string>& families) {
  std::set<std::string> setup;
  for (const auto& [id, family] : families) {
    const auto name = names.find(id);
    if (name == names.end())
      continue;
    if (family == "communicator" || family == "nccl_communicator" ||
        (family == "lifecycle" && name->second != "MPI_Pcontrol" && name->second != "MPI_Abort"))
      setup.insert(name->second);
  }
  return setup;
}

} // namespace

QString LoadedDatabase::communicator_label(std::optional<std::int64_t> comm_id) const {
  if (!comm_id || *comm_id < 0)
    return QStringLiteral("none");
  const auto found = communicator_labels.find(*comm_id);
  return found == communicator_labels.end() ? QStringLiteral("id %1").arg(*comm_id)
                                            : QString::fromStdString(found->second);
}

QString LoadedDatabase::implementation_name(int implementation) const {
  const auto found = implementation_names.find(implementation);
  return found == implementation_names.end() ? QString::number(implementation)
                                             : QString::fromStdString(found->second);
}

std::shared_ptr<const LoadedDatabase> load_database(const std::filesystem::path& path,
                                                    const LoadProgress& progress,
                                                    const std::atomic<bool>& cancel) {
  const auto report_step = [&](int percent, const QString& step) {
    if (cancel.load())
      throw LoadCancelled();
    if (progress)
      progress(percent, step);
  };
  report_step(0, QStringLiteral("opening"));
  auto loaded = std::make_shared<LoadedDatabase>();
  loaded->path = path;
  loaded->database = std::make_shared<const analysis::Database>(path);
  const auto& database = *loaded->database;
  database.require_events();

  // The report takes most of the time; the timeline extent is a few indexed look-ups after it. No
  // view shows queue times or thread concurrency, which read every traced request and call; the
  // Summary finds the findings, which read the whole trace, after the first paint.
  loaded->report = analysis::build_report(database, {},
                                          [&](std::string_view section, int done, int total) {
                                            report_step(5 + 80 * done / std::max(total, 1),
                                                        QString::fromUtf8(section.data(), section.size()));
                                          },
                                          {.queue_times = false, .concurrency = false, .findings = false});
  report_step(85, QStringLiteral("timeline"));
  loaded->timeline = analysis::query_timeline_extent(database);
  loaded->phases = analysis::query_timeline_phases(database);
  loaded->phase_names = PhaseNames(loaded->phases, loaded->report.training_steps);
  loaded->function_names = analysis::query_enum_names(database, "functions");
  loaded->function_families = analysis::query_function_families(database);
  loaded->setup_functions = setup_function_names(loaded->function_names, loaded->function_families);
  loaded->implementation_names = analysis::query_enum_names(database, "implementations");
  loaded->rank_function_times = analysis::query_function_times(database, analysis::FunctionTimeGroup::Rank);
  loaded->phase_function_times = analysis::query_function_times(database, analysis::FunctionTimeGroup::Phase);
  loaded->copy_paths = analysis::query_copy_path_usage(database);
  loaded->partner_traffic = analysis::query_partner_traffic(database);
  report_step(90, QStringLiteral("GPU streams"));
  loaded->gpu_streams = analysis::query_gpu_streams(database);
  loaded->cuda_api_threads = analysis::query_cuda_api_threads(database);
  loaded->has_synchronizations = database.has_rows("cuda_synchronizations");
  loaded->has_runtime_ops = database.has_rows("runtime_ops");
  loaded->has_nccl_calls = has_nccl_call_details(database);
  const bool step_ranges =
      std::any_of(loaded->report.nvtx_phases.begin(), loaded->report.nvtx_phases.end(),
                  [](const auto& phase) { return phase.path == "step" || phase.path.ends_with("/step"); });
  if (step_ranges) {
    // Every range of the run, per rank (read only when the report found `step` ranges): a training
    // run has a handful per step.
    std::map<int, std::vector<analysis::TimelineRange>> ranges;
    for (const auto& rank : loaded->report.ranks)
      ranges[rank.rank] =
          analysis::query_timeline_ranges(database, rank.rank, std::numeric_limits<std::int64_t>::min(),
                                          std::numeric_limits<std::int64_t>::max());
    loaded->range_steps = steps_from_ranges(ranges);
  }
  for (const auto& communicator : loaded->report.communicators)
    loaded->communicator_labels[communicator.id] = communicator.label;
  report_step(100, QStringLiteral("done"));
  return loaded;
}

} // namespace commlens::viewer
