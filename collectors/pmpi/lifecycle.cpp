// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and MPI_Pcontrol: where the profiler starts,
// stops and switches phases. Nothing happens before MPI_Init, so processes that never initialise
// MPI (mpirun, shell scripts) are untouched.
#include "call_recording.hpp"
#include "clock_alignment.hpp"
#include "collector_hooks.hpp"
#include "collector_registration.hpp"
#include "datatype_catalog.hpp"
#include "detached_requests.hpp"
#include "device_staging.hpp"
#include "finalize_pages.hpp"
#include "function_ids.hpp"
#include "function_table.hpp"
#include "launcher_job_key.hpp"
#include "phase_marks.hpp"

#include "commlens/profiler/job_registry.hpp"
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

// CPU time of the calling thread, to tell the profiler's own start-up work from waiting.
std::uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(now.tv_nsec);
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
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

// MPI_Init, MPI_Finalize and MPI_Abort, timed where the collectors cannot take part (call_recording.hpp).
// Init and finalize are collective over MPI_COMM_WORLD, so reports place their time there.
void record_lifecycle_call(Profiler& profiler, FunctionId function, MPI_Comm comm, std::uint64_t start_ticks,
                           std::uint64_t end_ticks) {
  CallRecording call(profiler, function, start_ticks, end_ticks);
  call.set_communicator(comm);
  call.record();
}

// This job's block of run ranks (job_registry.hpp). Where the launcher names the job, every process
// claims on its own and nothing is exchanged; else rank 0 claims and tells the others. Without a
// claim (unwritable folder) job stays -1: the process keeps no rank file, as a spawned job would
// overwrite its parent's files.
void take_place_in_run(const std::string& output_directory, ProcessIdentity& identity) {
  const std::string key = launcher_job_key(identity.world_rank);
  const auto claim = [&](const std::string& claim_key) {
    try {
      return claim_job(output_directory, identity.world_size, identity.spawned, identity.host, identity.pid,
                       claim_key);
    } catch (const std::runtime_error& error) {
      std::fprintf(stderr, "commlens: cannot register the job in %s; running unprofiled\n", error.what());
      return JobEntry{-1, 0};
    }
  };
  int place[2] = {-1, 0}; // job, first run rank
  if (!key.empty() || identity.world_rank == 0) {
    const JobEntry entry = claim(key);
    place[0] = entry.job;
    place[1] = entry.first_rank;
  }
  if (key.empty()) {
    PMPI_Bcast(place, 2, MPI_INT, 0, MPI_COMM_WORLD);
  }
  identity.job = place[0];
  identity.run_rank = place[1] + identity.world_rank;
}

// Every rank profiles or none, without asking the others: communicator ids are agreed by
// collectives that only profiled ranks issue. A rank that cannot keep a file (its claim or its
// file failed, and it said so) records into memory that is dropped; MPI_Finalize counts the
// ranks that kept files before merging.
Profiler* start_on_every_rank(ProcessIdentity identity) {
  Config config = Config::from_environment([&identity](const std::string& message) {
    if (identity.world_rank == 0) { // every rank sees the same environment: say it once
      std::fprintf(stderr, "%s%s\n", message.rfind("commlens:", 0) == 0 ? "" : "commlens: ", message.c_str());
    }
  });
  if (!config.collectors.pmpi) {
    return nullptr; // the same environment on every rank: all of them skip profiling together
  }
  take_place_in_run(config.output_directory, identity);
  start_datatype_catalog();
  Profiler* profiler =
      identity.job >= 0 ? Profiler::start(config, identity, run_functions(), datatype_names()) : nullptr;
  return profiler != nullptr ? profiler
                             : Profiler::start(std::move(config), identity, run_functions(), datatype_names(),
                                               Profiler::Storage::Discarded);
}

// Before PMPI_Init(_thread): the collectors that must act before MPI starts (collector_registration.hpp).
void before_mpi_init(int required_thread_level) {
  for (const CollectorLifecycle& collector : linked_collectors()) {
    if (collector.before_mpi_init != nullptr) {
      collector.before_mpi_init(required_thread_level);
    }
  }
}

// init_began/init_ended: clocks around PMPI_Init(_thread), stored as the MPI_Init call.
void start_profiling(int thread_level, FunctionId init_function, ClockReading init_began,
                     std::uint64_t init_ended) {
  const std::uint64_t began = monotonic_ns();
  const std::uint64_t began_cpu = thread_cpu_ns();
  ProcessIdentity identity;
  PMPI_Comm_rank(MPI_COMM_WORLD, &identity.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &identity.world_size);
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  identity.spawned = parent != MPI_COMM_NULL;
  identity.host = host_name();
  identity.pid = static_cast<long>(getpid());
  identity.mpi_init_ticks = init_began.ticks;
  identity.mpi_init_ns = init_began.ns;
  if (Profiler::active() != nullptr) {
    // NCCL calls before MPI_Init of a process no MPI launcher started (a singleton) started it:
    // it goes on recording, MPI calls included, without the MPI communicators' registry.
    return;
  }
  Profiler* profiler = start_on_every_rank(identity);
  if (profiler == nullptr) {
    for (const CollectorLifecycle& collector : linked_collectors()) {
      if (collector.not_started != nullptr) {
        collector.not_started();
      }
    }
    return;
  }
  profiler->inside_mpi().set_concurrent(thread_level == MPI_THREAD_MULTIPLE);
  start_request_tracker();
  start_communicator_registry(*profiler);
  record_lifecycle_call(*profiler, init_function, MPI_COMM_WORLD, init_began.ticks, init_ended);
  register_joined_communicator(fn::MPI_Comm_get_parent, parent, MPI_COMM_WORLD);
  store_run_values(*profiler, thread_level);
  const std::vector<FunctionDescription> functions = run_functions();
  for (const CollectorLifecycle& collector : linked_collectors()) {
    collector.start(*profiler, functions);
  }
  profiler->add_overhead("init", 1, monotonic_ns() - began, thread_cpu_ns() - began_cpu);
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

// The run's functions table: MPI's, then those of the linked collectors that intercept other APIs.
std::vector<FunctionDescription> run_functions() {
  std::vector<FunctionDescription> functions = function_descriptions();
  for (const CollectorLifecycle& collector : linked_collectors()) {
    if (collector.functions != nullptr) {
      std::ranges::copy(collector.functions(), std::back_inserter(functions));
    }
  }
  return functions;
}

static void merge_rank_files(const Config& config) {
  try {
    MergeOptions options{config.output_directory, "", nullptr};
    options.remove_rank_files = !config.keep_rank_files;
    const MergeResult result = merge_rank_databases(options);
    // A loss is said even when quiet: the database alone would not show it.
    const std::string losses = describe_losses(result);
    if (!config.quiet || !losses.empty()) {
      const std::string jobs = result.jobs > 1 ? " in " + std::to_string(result.jobs) + " jobs" : "";
      std::fprintf(stderr, "commlens: %zu ranks profiled%s -> %s%s%s\n", result.merged_ranks.size(),
                   jobs.c_str(), result.output_path.c_str(),
                   losses.empty() ? "" : "; WARNING: ", losses.c_str());
    }
    if (!result.missing_ranks.empty()) {
      std::string missing;
      for (const int rank : result.missing_ranks) {
        missing += (missing.empty() ? "" : ",") + std::to_string(rank);
      }
      std::fprintf(stderr, "commlens: warning: no rank file for ranks %s\n", missing.c_str());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commlens: merging the rank databases failed: %s\n", error.what());
  }
}

// On each job's rank 0, once the job's rank files are closed. Only the last job of the run to
// finish merges: the others' files may still be open.
void finish_job_and_merge_if_last(const Config& config, const ProcessIdentity& identity) {
  if (identity.world_rank != 0) {
    return;
  }
  const auto merge = [&config] {
    if (config.merge_at_finalize) {
      merge_rank_files(config);
    }
  };
  try {
    if (!finish_job(config.output_directory, identity.job, merge) && config.merge_at_finalize &&
        !config.quiet) {
      std::fprintf(stderr, "commlens: job %d finished; the run's last job to finish merges\n", identity.job);
    }
  } catch (const std::runtime_error& error) {
    std::fprintf(stderr, "commlens: cannot mark job %d finished in %s; merging now\n", identity.job,
                 error.what());
    merge();
  }
}

} // namespace commlens::pmpi

using commlens::Profiler;
using commlens::pmpi::CallRecording;

extern "C" COMMLENS_EXPORT int MPI_Init(int* argc, char*** argv) {
  commlens::pmpi::before_mpi_init(MPI_THREAD_SINGLE);
  const commlens::ClockReading began = commlens::read_clocks();
  const int rc = PMPI_Init(argc, argv);
  const std::uint64_t ended = commlens::now_ticks();
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    commlens::pmpi::start_profiling(provided, commlens::pmpi::fn::MPI_Init, began, ended);
  }
  return rc;
}

extern "C" COMMLENS_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  commlens::pmpi::before_mpi_init(required);
  const commlens::ClockReading began = commlens::read_clocks();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  const std::uint64_t ended = commlens::now_ticks();
  if (rc == MPI_SUCCESS) {
    commlens::pmpi::start_profiling(*provided, commlens::pmpi::fn::MPI_Init_thread, began, ended);
  }
  return rc;
}

extern "C" COMMLENS_EXPORT int MPI_Finalize() {
  Profiler* const profiler = Profiler::active();
  if (profiler == nullptr) {
    return PMPI_Finalize();
  }
  using namespace commlens::pmpi;
  const std::uint64_t entered = commlens::now_ticks();
  const std::uint64_t began = commlens::monotonic_ns();
  // The ranks' only clock exchange (MPI_Init has none, so no rank waits for another there). On a
  // private duplicate: the application may still have receives posted on MPI_COMM_WORLD.
  MPI_Comm clock_comm = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &clock_comm);
  const commlens::ProcessIdentity& started = profiler->identity();
  const std::int64_t rate_ppb =
      rate_against_monotonic_ppb(profiler->clock(), {started.mpi_init_ticks, started.mpi_init_ns});
  const ClockSample final_clock = measure_clock_offset(clock_comm, profiler->clock(), rate_ppb);
  PMPI_Comm_free(&clock_comm);
  profiler->set_clock_alignment(alignment_at_init(final_clock, rate_ppb, profiler->init_ns()));
  profiler->add_overhead("finalize", 1, commlens::monotonic_ns() - began);
  detached_requests::finish_all(); // freed requests still in flight: MPI completes them now
  // Pinned images, freed while the runtime's CUDA calls still serve; the run table says how much.
  if (const staged_requests::PinnedUsage pinned = staged_requests::release_all(); pinned.peak_bytes > 0) {
    profiler->set_run_value("host_staging_memory",
                            std::to_string(pinned.peak_bytes >> 10) + " KiB pinned at most, " +
                                std::to_string(pinned.left_bytes >> 10) + " KiB after finalize");
  }
  // The call as far as commlens can store it: PMPI_Finalize itself runs after the rank file closed.
  record_lifecycle_call(*profiler, fn::MPI_Finalize, MPI_COMM_WORLD, entered, commlens::now_ticks());
  // Last started, first finished: the runtime's last copies and its IPC closes happen while the
  // CUDA collector still records them (ipc_events then shows every mapping closed).
  for (const CollectorSlot& slot : std::views::reverse(collector_hooks().slots)) {
    if (slot.finalize != nullptr) {
      slot.finalize();
    }
  }
  for (const CollectorLifecycle& collector : linked_collectors()) {
    if (collector.finished != nullptr) {
      collector.finished();
    }
  }
  const commlens::Config config = profiler->config();
  const commlens::ProcessIdentity identity = profiler->identity();
  const int kept_file = profiler->keeps_rank_file() ? 1 : 0;
  const std::string rank_file = profiler->stop();
  // While the merge would wait for the last rank anyway, every rank turns its own chunks into the
  // merged file's pages, so that the merge copies them.
  encode_trace_pages_at_finalize(config, identity, rank_file, kept_file != 0);
  // Every rank file of the job is closed before rank 0 goes on; the count is the start-up check
  // MPI_Init no longer makes.
  int files_kept = 0;
  PMPI_Allreduce(&kept_file, &files_kept, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (files_kept == 0) {
    return PMPI_Finalize(); // every rank said why it kept nothing
  }
  if (!config.merge_at_finalize) {
    report_unmerged_run(*profiler, config);
  }
  if (identity.job >= 0) {
    finish_job_and_merge_if_last(config, identity);
  } else if (identity.world_rank == 0) {
    std::fprintf(stderr,
                 "commlens: %d of %d ranks kept their files in %s; this job is not registered there, "
                 "run `commlens merge` on that folder\n",
                 files_kept, identity.world_size, config.output_directory.c_str());
  }
  return PMPI_Finalize();
}

extern "C" COMMLENS_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (Profiler* const profiler = Profiler::active()) {
    const std::uint64_t now = commlens::now_ticks(); // the call does not return
    commlens::pmpi::record_lifecycle_call(*profiler, commlens::pmpi::fn::MPI_Abort, comm, now, now);
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
    commlens::pmpi::begin_phase(*profiler, level, commlens::pmpi::PhaseMark::Pcontrol);
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
