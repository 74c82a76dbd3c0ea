// NCCL before MPI_Init or without MPI (nccl_without_mpi.hpp).
#include "nccl_without_mpi.hpp"

#include "collector_hooks.hpp"
#include "collector_registration.hpp"
#include "nccl_call_details.hpp"
#include "nccl_recording.hpp"

#include "commlens/profiler/job_registry.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <ranges>
#include <string>
#include <unistd.h>
#include <vector>

namespace commlens::nccl {
namespace {

enum class Start : int { Untried, Started, WaitForMpi };

std::atomic<Start> start_state{Start::Untried};
std::atomic<std::uint64_t> calls_before_profiler{0};

struct EarlyCommunicators {
  std::mutex mutex;
  std::vector<EarlyCommunicator> list;
};

EarlyCommunicators& early() {
  static auto* instance = new EarlyCommunicators; // never destroyed: calls may come during exit
  return *instance;
}

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable) != nullptr) {
      return true;
    }
  }
  return false;
}

// The first of the variables that holds a number >= 0, else `otherwise`.
int environment_number(std::initializer_list<const char*> names, int otherwise) {
  for (const char* name : names) {
    const char* text = std::getenv(name);
    char* end = nullptr;
    const long value = text != nullptr ? std::strtol(text, &end, 10) : -1;
    if (text != nullptr && end != text && *end == '\0' && value >= 0) {
      return static_cast<int>(value);
    }
  }
  return otherwise;
}

// A process under an MPI launcher that used NCCL and never initialised MPI: say what was lost.
void warn_if_mpi_never_started() {
  int initialised = 0;
  PMPI_Initialized(&initialised);
  const std::uint64_t calls = calls_before_profiler.load(std::memory_order_relaxed);
  if (initialised == 0 && calls > 0 && Profiler::active() == nullptr) {
    std::fprintf(
        stderr,
        "commlens: this process made %llu NCCL calls under an MPI launcher and never called MPI_Init: "
        "none was recorded (COMMLENS_START_AT_NCCL=1 profiles such processes from their first NCCL "
        "call)\n",
        static_cast<unsigned long long>(calls));
  }
}

void stop_at_exit() {
  Profiler* const profiler = Profiler::active();
  if (profiler == nullptr) {
    return; // a later MPI_Finalize stopped it
  }
  for (const contract::CollectorSlot& slot : std::views::reverse(contract::collector_hooks().slots)) {
    if (slot.finalize != nullptr) {
      slot.finalize();
    }
  }
  for (const pmpi::CollectorLifecycle& collector : pmpi::linked_collectors()) {
    if (collector.start_without_mpi != nullptr && collector.finished != nullptr) {
      collector.finished();
    }
  }
  const Config config = profiler->config();
  const ProcessIdentity identity = profiler->identity();
  profiler->stop();
  if (identity.world_size == 1) {
    pmpi::finish_job_and_merge_if_last(config, identity);
  } else if (!config.quiet) {
    std::fprintf(stderr, "commlens: rank %d of %d (no MPI) -> %s; merge with `commlens merge %s`\n",
                 identity.run_rank, identity.world_size, profiler->rank_database_path().c_str(),
                 config.output_directory.c_str());
  }
}

// Null when the process waits for MPI_Init (launched by MPI, COMMLENS_START_AT_NCCL off) or must not
// be profiled.
Profiler* start_without_mpi() {
  const bool under_mpi_launcher = launched_by_mpi();
  ProcessIdentity identity;
  identity.world_size = under_mpi_launcher ? environment_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, 1)
                                           : environment_number({"WORLD_SIZE"}, 1);
  identity.world_size = std::max(1, identity.world_size);
  identity.world_rank =
      std::min(under_mpi_launcher ? environment_number({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, 0)
                                  : environment_number({"RANK"}, 0),
               identity.world_size - 1);
  identity.run_rank = identity.world_rank;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  identity.host = host;
  identity.pid = static_cast<long>(getpid());
  Config config = Config::from_environment(pmpi::settings_warning(identity.world_rank));
  if (!config.collectors.pmpi) {
    return nullptr;
  }
  if (under_mpi_launcher && !config.start_at_nccl) {
    std::atexit(warn_if_mpi_never_started); // MPI_Init is expected to start the profiler
    return nullptr;
  }
  if (identity.world_size == 1) {
    try {
      claim_job(config.output_directory, 1, false, identity.host, identity.pid);
    } catch (const std::runtime_error& error) {
      std::fprintf(stderr, "commlens: cannot register the job in %s; running unprofiled\n", error.what());
      return nullptr;
    }
  }
  const std::vector<FunctionDescription> functions = pmpi::run_functions();
  Profiler* profiler = Profiler::start(std::move(config), identity, functions);
  if (profiler == nullptr) {
    return nullptr;
  }
  profiler->set_run_value("command_line", pmpi::command_line());
  profiler->set_run_value("mode", mode_name(profiler->config().mode));
  profiler->set_run_value("world_size", std::to_string(identity.world_size));
  profiler->set_run_value("mpi_library_version", "MPI not initialised: NCCL started the profiler");
  for (const pmpi::CollectorLifecycle& collector : pmpi::linked_collectors()) {
    if (collector.start_without_mpi != nullptr) {
      collector.start_without_mpi(*profiler, functions);
    }
  }
  std::atexit(stop_at_exit);
  return profiler;
}

// The list's last living communicator with that handle (NCCL reuses the handles of destroyed ones).
std::size_t living_early(const std::vector<EarlyCommunicator>& list, ncclComm_t comm) {
  for (std::size_t i = list.size(); i-- > 0;) {
    if (list[i].comm == comm && list[i].destroyed_ns == 0) {
      return i;
    }
  }
  return list.size();
}

} // namespace

Profiler* profiler_for_nccl() noexcept {
  if (Profiler* const profiler = Profiler::active()) [[likely]] {
    return profiler;
  }
  if (start_state.load(std::memory_order_acquire) != Start::Untried) {
    return nullptr;
  }
  static std::mutex starting;
  const std::lock_guard lock(starting);
  if (start_state.load(std::memory_order_relaxed) != Start::Untried) {
    return Profiler::active();
  }
  int mpi_started = 0;
  PMPI_Initialized(&mpi_started);
  if (mpi_started != 0) {
    // MPI_Init ran and left the profiler off.
    start_state.store(Start::WaitForMpi, std::memory_order_release);
    return nullptr;
  }
  Profiler* profiler = nullptr;
  try {
    profiler = start_without_mpi();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commlens: cannot start the profiler for NCCL: %s\n", error.what());
  }
  start_state.store(profiler != nullptr ? Start::Started : Start::WaitForMpi, std::memory_order_release);
  return profiler;
}

void note_call_before_profiler() noexcept {
  calls_before_profiler.fetch_add(1, std::memory_order_relaxed);
}

void remember_early_from_unique_id(ncclComm_t comm, const ncclUniqueId& unique_id,
                                   std::size_t creator) noexcept {
  if (comm == nullptr) {
    return;
  }
  const std::lock_guard lock(early().mutex);
  early().list.push_back({.origin = EarlyCommunicator::Origin::UniqueId,
                          .comm = comm,
                          .creator = creator,
                          .created_ns = monotonic_ns(),
                          .unique_id = unique_id_communicator(unique_id)});
}

void remember_early_split(ncclComm_t newcomm, ncclComm_t parent, int color, std::size_t creator) noexcept {
  const std::lock_guard lock(early().mutex);
  std::vector<EarlyCommunicator>& list = early().list;
  const std::size_t from = living_early(list, parent);
  if (from == list.size()) {
    return; // a parent the collector never saw: its children stay unknown too
  }
  const std::uint32_t sequence = list[from].splits++;
  if (newcomm == nullptr) {
    return;
  }
  list.push_back({.origin = EarlyCommunicator::Origin::Split,
                  .comm = newcomm,
                  .creator = creator,
                  .created_ns = monotonic_ns(),
                  .parent = from,
                  .sequence = sequence,
                  .color = color});
}

void remember_early_all(const ncclComm_t* comms, int count, std::size_t creator) noexcept {
  const std::lock_guard lock(early().mutex);
  for (int i = 0; i < count; ++i) {
    if (comms[i] != nullptr) {
      early().list.push_back({.origin = EarlyCommunicator::Origin::All,
                              .comm = comms[i],
                              .creator = creator,
                              .created_ns = monotonic_ns()});
    }
  }
}

// Kept, marked destroyed: its splits made before still name it as their parent, and it is
// registered at MPI_Init as created and freed.
void forget_early_communicator(ncclComm_t comm) noexcept {
  const std::lock_guard lock(early().mutex);
  const std::size_t index = living_early(early().list, comm);
  if (index < early().list.size()) {
    early().list[index].destroyed_ns = monotonic_ns();
    early().list[index].shape = communicator_shape(comm);
  }
}

void adopt_early_communicators(Profiler& profiler) {
  if (const std::uint64_t calls = calls_before_profiler.load(std::memory_order_relaxed); calls > 0) {
    profiler.set_run_value("nccl_calls_before_mpi_init", std::to_string(calls));
  }
  const std::lock_guard lock(early().mutex);
  // The profiler's clock counts from its own origin: monotonic times moved onto it, in the past.
  const std::uint64_t now_ns = monotonic_ns();
  const std::uint64_t profiler_now = profiler.clock().now_ns();
  const auto on_profiler_clock = [&](std::uint64_t monotonic) -> std::uint64_t {
    const std::uint64_t age_ns = now_ns > monotonic ? now_ns - monotonic : 0;
    return profiler_now > age_ns ? profiler_now - age_ns : 1;
  };
  std::vector<std::int64_t> ids; // per list entry, for its splits
  ids.reserve(early().list.size());
  for (const EarlyCommunicator& communicator : early().list) {
    const std::int64_t parent_id =
        communicator.origin == EarlyCommunicator::Origin::Split ? ids[communicator.parent] : -1;
    ids.push_back(
        register_early(profiler, communicator, parent_id, on_profiler_clock(communicator.created_ns),
                       communicator.destroyed_ns != 0 ? on_profiler_clock(communicator.destroyed_ns) : 0));
  }
  early().list.clear();
}

} // namespace commlens::nccl
