// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and MPI_Pcontrol: where the profiler starts,
// stops and switches phases. Nothing happens before MPI_Init, so processes that never initialise
// MPI (mpirun, shell scripts) are untouched.
#include "call_recording.hpp"
#include "clock_alignment.hpp"
#include "collector_hooks.hpp"
#include "cuda_plugin_loader.hpp"
#include "datatype_catalog.hpp"
#include "function_ids.hpp"
#include "function_table.hpp"
#include "mpit_collector.hpp"

#include "commlens/profiler/merge.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <ranges>
#include <string>
#include <unistd.h>

namespace commlens::pmpi {

namespace {

MPI_Comm clock_comm = MPI_COMM_NULL; // private, so clock ping-pongs never match user messages
ClockSample init_clock;

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  for (char& c : text) {
    c = c == '\0' ? ' ' : c;
  }
  return text;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

const char* thread_level_name(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  default:
    return "MPI_THREAD_MULTIPLE";
  }
}

void store_run_values(Profiler& profiler, int thread_level) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  PMPI_Get_library_version(version, &length);
  std::string library(version, length);
  while (!library.empty() && (library.back() == '\n' || library.back() == '\0')) {
    library.pop_back();
  }
  profiler.set_run_value("command_line", command_line());
  profiler.set_run_value("mpi_library_version", library);
  profiler.set_run_value("mpi_thread_level", thread_level_name(thread_level));
  profiler.set_run_value("world_size", std::to_string(profiler.identity().world_size));
  profiler.set_run_value("mode", mode_name(profiler.config().mode));
  profiler.set_run_value("start_time_utc", utc_now());
}

// Every rank must profile or none: communicator ids are agreed by collectives that only profiled
// ranks issue, so one rank that failed to open its file (unwritable directory) stops all of them.
Profiler* start_on_every_rank(const ProcessIdentity& identity) {
  Config config = Config::from_environment([&identity](const std::string& message) {
    if (identity.world_rank == 0) { // every rank sees the same environment: say it once
      std::fprintf(stderr, "%s%s\n", message.rfind("commlens:", 0) == 0 ? "" : "commlens: ", message.c_str());
    }
  });
  if (!config.collectors.pmpi) {
    return nullptr; // the same environment on every rank: all of them skip profiling together
  }
  start_datatype_catalog();
  Profiler* profiler =
      Profiler::start(std::move(config), identity, function_descriptions(), datatype_names());
  int started = profiler != nullptr ? 1 : 0;
  int everywhere = 0;
  PMPI_Allreduce(&started, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (profiler != nullptr && everywhere == 0) {
    profiler->stop();
    return nullptr;
  }
  return everywhere != 0 ? profiler : nullptr;
}

void start_profiling(int thread_level) {
  const std::uint64_t began = monotonic_ns();
  ProcessIdentity identity;
  PMPI_Comm_rank(MPI_COMM_WORLD, &identity.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &identity.world_size);
  identity.host = host_name();
  identity.pid = static_cast<long>(getpid());
  Profiler* profiler = start_on_every_rank(identity);
  if (profiler == nullptr) {
    return;
  }
  profiler->inside_mpi().set_concurrent(thread_level == MPI_THREAD_MULTIPLE);
  start_request_tracker();
  start_communicator_registry(*profiler);
  store_run_values(*profiler, thread_level);
  commlens::mpit::start_mpit_collector(*profiler, thread_level, function_descriptions());
  PMPI_Comm_dup(MPI_COMM_WORLD, &clock_comm);
  init_clock = measure_clock_offset(clock_comm, profiler->clock());
  profiler->set_clock_alignment({init_clock.offset_ns, 0.0});
  start_cuda_collectors(*profiler);
  profiler->add_overhead("init", 1, monotonic_ns() - began);
}

void merge_on_rank_zero(const Config& config, int world_rank) {
  if (world_rank != 0) {
    return;
  }
  try {
    MergeOptions options{config.output_directory, "", nullptr};
    options.remove_rank_files = !config.keep_rank_files;
    const MergeResult result = merge_rank_databases(options);
    // A loss is said even when quiet: the database alone would not show it.
    const std::string losses = describe_losses(result);
    if (!config.quiet || !losses.empty()) {
      std::fprintf(stderr, "commlens: %zu ranks profiled -> %s%s%s\n", result.merged_ranks.size(),
                   result.output_path.c_str(), losses.empty() ? "" : "; WARNING: ", losses.c_str());
    }
  } catch (const MergeError& error) {
    std::fprintf(stderr, "commlens: merging the rank databases failed: %s\n", error.what());
  }
}

// Without the merge rank 0 has no database to read the ranks' losses from: the ranks add them up
// (every rank has the same setting, so every rank takes part).
void report_unmerged_run(const Profiler& profiler, const Config& config) {
  const Profiler::Losses mine = profiler.losses();
  std::uint64_t local[2] = {mine.dropped_events, mine.summary_overflow};
  std::uint64_t total[2] = {0, 0};
  PMPI_Reduce(local, total, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (profiler.identity().world_rank != 0) {
    return;
  }
  MergeResult run;
  run.world_size = profiler.identity().world_size;
  run.dropped_events = total[0];
  run.summary_overflow = total[1];
  const std::string losses = describe_losses(run);
  if (!config.quiet || !losses.empty()) {
    std::fprintf(stderr, "commlens: %d ranks profiled -> %s (rank files, not merged)%s%s\n", run.world_size,
                 config.output_directory.c_str(), losses.empty() ? "" : "; WARNING: ", losses.c_str());
  }
}

} // namespace

} // namespace commlens::pmpi

using commlens::Profiler;
using commlens::pmpi::CallRecording;

extern "C" COMMLENS_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    commlens::pmpi::start_profiling(provided);
  }
  return rc;
}

extern "C" COMMLENS_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) {
    commlens::pmpi::start_profiling(*provided);
  }
  return rc;
}

extern "C" COMMLENS_EXPORT int MPI_Finalize() {
  Profiler* const profiler = Profiler::active();
  if (profiler == nullptr) {
    return PMPI_Finalize();
  }
  using namespace commlens::pmpi;
  const std::uint64_t began = commlens::monotonic_ns();
  const ClockSample final_clock = measure_clock_offset(clock_comm, profiler->clock());
  PMPI_Comm_free(&clock_comm);
  profiler->set_clock_alignment({init_clock.offset_ns, drift_ppb(init_clock, final_clock)});
  profiler->add_overhead("finalize", 1, commlens::monotonic_ns() - began);
  // Last started, first finished: the runtime's last copies and its IPC closes happen while the
  // CUDA collector still records them (ipc_events then shows every mapping closed).
  for (const CollectorSlot& slot : std::views::reverse(collector_hooks().slots)) {
    if (slot.finalize != nullptr) {
      slot.finalize();
    }
  }
  stop_runtime_channel();
  const commlens::Config config = profiler->config();
  const int world_rank = profiler->identity().world_rank;
  profiler->stop();
  PMPI_Barrier(MPI_COMM_WORLD); // every rank file is closed before rank 0 reads them
  if (config.merge_at_finalize) {
    merge_on_rank_zero(config, world_rank);
  } else {
    report_unmerged_run(*profiler, config);
  }
  return PMPI_Finalize();
}

extern "C" COMMLENS_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (Profiler* const profiler = Profiler::active()) {
    profiler->flush();
  }
  return PMPI_Abort(comm, errorcode);
}

// Level 0 stops collection, 1 resumes it, 2 and above open a new phase (as mpiP users expect).
// The call itself is recorded with the level in the tag column, inside the state it switches to
// (level 0: just before collection stops).
extern "C" COMMLENS_EXPORT int MPI_Pcontrol(const int level, ...) {
  Profiler* const profiler = Profiler::active();
  if (profiler == nullptr) {
    return PMPI_Pcontrol(level);
  }
  if (level == 1) {
    profiler->set_collecting(true);
  } else if (level >= 2) {
    profiler->begin_next_phase(level);
  }
  CallRecording call(*profiler, commlens::pmpi::fn::MPI_Pcontrol);
  const int rc = PMPI_Pcontrol(level);
  call.finish();
  call.set_tag(level);
  call.record();
  if (level == 0) {
    profiler->set_collecting(false);
  }
  return rc;
}
