// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and MPI_Pcontrol: where the profiler starts,
// stops and switches phases. Nothing happens before MPI_Init, so processes that never initialise
// MPI (mpirun, shell scripts) are untouched.
#include "call_recording.hpp"
#include "collector_hooks.hpp"
#include "collector_registration.hpp"
#include "datatype_catalog.hpp"
#include "detached_requests.hpp"
#include "device_staging.hpp"
#include "finalize.hpp"
#include "function_ids.hpp"
#include "function_table.hpp"
#include "launcher_job_key.hpp"
#include "phase_marks.hpp"

#include "commlens/profiler/job_registry.hpp"

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
      JobEntry unclaimed;
      unclaimed.job = -1;
      return unclaimed;
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
  Config config = Config::from_environment(settings_warning(identity.world_rank));
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

} // namespace

void record_lifecycle_call(Profiler& profiler, FunctionId function, MPI_Comm comm, std::uint64_t start_ticks,
                           std::uint64_t end_ticks) {
  CallRecording call(profiler, function, start_ticks, end_ticks);
  call.set_communicator(comm);
  call.record();
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

Config::Warn settings_warning(int world_rank) {
  return [world_rank](const std::string& message) {
    if (world_rank == 0) {
      std::fprintf(stderr, "%s%s\n", message.rfind("commlens:", 0) == 0 ? "" : "commlens: ", message.c_str());
    }
  };
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
  if (Profiler* const profiler = Profiler::active()) {
    commlens::pmpi::finish_profiling(profiler);
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
