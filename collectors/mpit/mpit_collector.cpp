#include "mpit_collector.hpp"

#include "collector_hooks.hpp"
#include "cvar_snapshot.hpp"
#include "loaded_objects.hpp"
#include "mpit_names.hpp"
#include "pvar_catalog.hpp"
#include "pvar_sampler.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>

namespace commlens::mpit {

namespace {

struct MpitCollector {
  MpitCollector(Profiler& profiler, std::vector<PvarDescription> selected)
      : sampler(profiler, std::move(selected)) {}

  PvarSampler sampler;
  std::vector<std::uint8_t> sample_at_call; // by FunctionId: 1 for COMMLENS_PVAR_CALLS
  std::uint64_t period_ticks = 0;
  std::atomic<std::uint64_t> next_due_ticks{0};
};

// Set once before the hooks are installed; lives until exit so a late hook never sees it freed.
std::unique_ptr<MpitCollector> collector;

// What MPI_T_init_thread returned before PMPI_Init, and how long it took; unset when not called.
struct EarlyInitialisation {
  int rc = MPI_SUCCESS;
  std::uint64_t duration_ns = 0;
};
std::optional<EarlyInitialisation> early_initialisation;

void sample_without_throwing(Trigger trigger, std::optional<std::uint64_t> call_id) noexcept {
  try {
    collector->sampler.sample(trigger, call_id);
  } catch (...) {
    // Out of memory while building rows: that sample is lost, the application goes on.
  }
}

bool sampled_at(FunctionId function) noexcept {
  return function < collector->sample_at_call.size() && collector->sample_at_call[function] != 0;
}

void on_call_enter(std::uint64_t call_id, FunctionId function) noexcept {
  if (sampled_at(function)) {
    sample_without_throwing(Trigger::CallEntry, call_id);
  }
}

// The period is kept at call exits, by whichever application thread leaves an MPI call first once
// it has elapsed (one compare of the call's own end timestamp per call); under
// MPI_THREAD_MULTIPLE the compare-exchange lets exactly one of the threads that see it due sample.
// docs/design.md says why this replaced a timer thread.
void on_call_exit(std::uint64_t call_id, FunctionId function, std::uint64_t now) noexcept {
  if (sampled_at(function)) {
    sample_without_throwing(Trigger::CallExit, call_id);
    return;
  }
  std::uint64_t due = collector->next_due_ticks.load(std::memory_order_relaxed);
  if (now >= due && collector->next_due_ticks.compare_exchange_strong(due, now + collector->period_ticks,
                                                                      std::memory_order_relaxed)) {
    sample_without_throwing(Trigger::Period, call_id);
  }
}

void on_communicator_created(MPI_Comm comm, std::int64_t id) {
  collector->sampler.bind_communicator(comm, id);
}

void on_communicator_freed(MPI_Comm comm) {
  collector->sampler.unbind_communicator(comm);
}

void on_finalize() {
  collector_slot(contract::Collector::Mpit) = {};
  collector->sampler.sample(Trigger::Finalize);
  collector->sampler.close();
  MPI_T_finalize();
}

std::vector<std::uint8_t> call_table(const Profiler& profiler,
                                     std::span<const FunctionDescription> functions) {
  std::vector<std::uint8_t> table(functions.size(), 0);
  for (const std::string& name : profiler.config().pvar_calls) {
    const auto found =
        std::find_if(functions.begin(), functions.end(),
                     [&name](const FunctionDescription& function) { return name == function.name; });
    if (found != functions.end()) {
      table[static_cast<std::size_t>(found - functions.begin())] = 1;
    } else if (profiler.identity().world_rank == 0) {
      std::fprintf(stderr,
                   "commlens: COMMLENS_PVAR_CALLS names %s, which this MPI library does not have; ignored\n",
                   name.c_str());
    }
  }
  return table;
}

std::string joined_names(const std::vector<PvarDescription>& pvars) {
  std::string names;
  for (const PvarDescription& pvar : pvars) {
    names += (names.empty() ? "" : ",") + pvar.name;
  }
  return names;
}

// Why nothing is sampled, or empty when something is.
std::string reason_for_no_sampling(const std::vector<PvarDescription>& catalog,
                                   const std::vector<PvarDescription>& selected) {
  if (catalog.empty()) {
    return "none: the MPI library exposes no performance variables";
  }
  if (selected.empty()) {
    return "none: no performance variable of this MPI library matches COMMLENS_PVARS";
  }
  return "";
}

// Returns whether the hooks have work (every installed hook costs each MPI call an indirect call).
bool start_sampling(Profiler& profiler, std::span<const FunctionDescription> functions) {
  collector->sample_at_call = call_table(profiler, functions);
  collector->sampler.bind_unbound();
  collector->sampler.bind_communicator(MPI_COMM_WORLD, 0);
  const std::uint32_t period_ms = profiler.config().pvar_period_ms;
  profiler.set_run_value("mpit_pvar_period_ms", std::to_string(period_ms));
  if (collector->sampler.handle_count() == 0) {
    profiler.set_run_value("mpit_sampling",
                           "none: no pvar handle could be allocated (pvar_handles says why)");
    return false;
  }
  profiler.set_run_value("mpit_sampling",
                         "at call exits, once per period, and COMMLENS_PVAR_CALLS boundaries");
  collector->period_ticks = static_cast<std::uint64_t>(period_ms * 1e6 / profiler.clock().ns_per_tick());
  collector->next_due_ticks.store(now_ticks() + collector->period_ticks, std::memory_order_relaxed);
  collector->sampler.sample(Trigger::Init);
  return true;
}

} // namespace

void initialise_mpit_before_mpi(int required_level) {
  // Every rank reads the same environment; settings are checked and reported after PMPI_Init.
  const CollectorSet collectors = Config::from_environment([](const std::string&) {}).collectors;
  if (!collectors.pmpi || !collectors.mpit) {
    return;
  }
  // The collector calls MPI_T only from the application's threads, inside their MPI calls, one at a
  // time (the sampler's lock): the level the application asks of MPI is all it needs.
  const std::uint64_t began = monotonic_ns();
  int provided = MPI_THREAD_SINGLE;
  const SharedObjects before = loaded_shared_objects();
  const int rc = MPI_T_init_thread(required_level, &provided);
  keep_loaded_since(before);
  early_initialisation = EarlyInitialisation{rc, monotonic_ns() - began};
}

void release_mpit_without_collector() {
  if (early_initialisation && early_initialisation->rc == MPI_SUCCESS) {
    MPI_T_finalize();
  }
  early_initialisation.reset();
}

void start_mpit_collector(Profiler& profiler, std::span<const FunctionDescription> functions) {
  if (!profiler.config().collectors.mpit || !early_initialisation) {
    profiler.set_run_value("mpit_sampling", "none: COMMLENS_COLLECTORS leaves mpit out");
    return;
  }
  profiler.add_overhead("mpit_init", 1, early_initialisation->duration_ns);
  if (const int rc = early_initialisation->rc; rc != MPI_SUCCESS) {
    report_once(profiler, "MPI_T_init_thread", rc, "the MPI_T collector is off");
    profiler.set_run_value("mpit_sampling", "none: MPI_T_init_thread failed: " + mpit_error_name(rc));
    return;
  }
  profiler.set_run_value("mpit_cvars", std::to_string(store_cvar_snapshot(profiler)));
  const std::vector<PvarDescription> catalog = read_pvar_catalog(profiler, profiler.config().pvars);
  std::vector<PvarDescription> selected;
  std::copy_if(catalog.begin(), catalog.end(), std::back_inserter(selected),
               [](const PvarDescription& pvar) { return pvar.selected; });
  profiler.set_run_value("mpit_pvars_found", std::to_string(catalog.size()));
  profiler.set_run_value("mpit_pvars_selected", joined_names(selected));
  if (const std::string reason = reason_for_no_sampling(catalog, selected); !reason.empty()) {
    profiler.set_run_value("mpit_sampling", reason);
    MPI_T_finalize();
    return;
  }
  collector = std::make_unique<MpitCollector>(profiler, std::move(selected));
  const bool samples = start_sampling(profiler, functions);
  // Hooks only where there is work: every call pays for an installed hook (an indirect call).
  const bool samples_at_entries =
      samples && std::any_of(collector->sample_at_call.begin(), collector->sample_at_call.end(),
                             [](std::uint8_t chosen) { return chosen != 0; });
  collector_slot(contract::Collector::Mpit) = {samples_at_entries ? on_call_enter : nullptr,
                                               samples ? on_call_exit : nullptr, on_communicator_created,
                                               on_communicator_freed, on_finalize};
}

} // namespace commlens::mpit
