#pragma once
// Everything the views show about one database, read in a background thread by load_database. The
// views hold it through a shared pointer and never touch SQL; the timeline keeps reading windows
// of calls through the analysis layer as the user zooms.
#include "commlens/analysis/breakdowns.hpp"
#include "commlens/analysis/cuda_api_calls.hpp"
#include "commlens/analysis/gpu_streams.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/timeline.hpp"
#include "phase_names.hpp"
#include "range_steps.hpp"

#include <QString>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

namespace commlens::viewer {

struct LoadedDatabase {
  std::filesystem::path path;
  analysis::Report report;
  analysis::TimelineExtent timeline;
  std::vector<analysis::TimelinePhase> phases; // every rank's, for the timeline's annotation rows
  PhaseNames phase_names;                      // "set-up", "step 3", ... as every view names phases
  std::map<int, std::string> function_names;
  std::map<int, std::string> function_families; // p2p, collective, nccl_communicator, ... (docs/schema.md)
  std::set<std::string> setup_functions;        // is_setup_function's names
  std::map<int, std::string> implementation_names;
  std::map<std::int64_t, std::string> communicator_labels;
  std::vector<analysis::GroupFunctionTime> rank_function_times;  // the summary's stacked bars
  std::vector<analysis::GroupFunctionTime> phase_function_times; // the steps view's bars
  std::vector<analysis::CopyPathUsage> copy_paths;               // empty without CUDA copies
  std::vector<analysis::PartnerCell> partner_traffic;            // the partner matrix, by kind
  std::vector<RangeStep> range_steps;           // the steps view's split; empty without NVTX `step` ranges
  std::vector<analysis::GpuStream> gpu_streams; // the timeline's lane per CUDA stream; empty without CUDA
  // The timeline's CUDA API row per thread; empty without cuda_api_calls rows.
  std::vector<analysis::CudaApiThread> cuda_api_threads;
  bool has_synchronizations = false; // cuda_synchronizations has rows: the timeline gives each rank a row
  bool has_runtime_ops = false;      // runtime_ops has rows: call tooltips say what the runtime decided
  bool has_nccl_calls = false;       // the nccl_calls side table is there: NCCL call tooltips show its row
  // For the few queries the UI thread makes itself (histograms of one phase, "find next call").
  std::shared_ptr<const analysis::Database> database;

  QString function_name(int function_id) const;
  // MPI_Init, MPI_Finalize, communicator creation, NCCL communicator set-up: by family.
  bool is_setup_function(const std::string& name) const;
  QString communicator_label(std::optional<std::int64_t> comm_id) const;
  QString implementation_name(int implementation) const;
};

// Thrown out of load_database when the cancel flag was raised.
struct LoadCancelled : std::runtime_error {
  LoadCancelled() : std::runtime_error("loading cancelled") {}
};

// percent in [0, 100] and what is being read, for the progress bar.
using LoadProgress = std::function<void(int percent, const QString& step)>;

// Opens and validates `path` and reads the report and timeline extent. Throws
// analysis::AnalysisError (one-line reason) on bad input and LoadCancelled when `cancel` is set.
std::shared_ptr<const LoadedDatabase> load_database(const std::filesystem::path& path,
                                                    const LoadProgress& progress,
                                                    const std::atomic<bool>& cancel);

} // namespace commlens::viewer
