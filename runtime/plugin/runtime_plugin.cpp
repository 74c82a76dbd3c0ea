#include "plugin/runtime_plugin.hpp"

#include "collectives/resident_call.hpp"
#include "collectives/runtime_state.hpp"
#include "nonblocking/nonblocking_collectives.hpp"
#include "point_to_point/point_to_point.hpp"
#include "resident/resident_protocol.hpp"
#include "runtime_collective_names.hpp"
#include "runtime_entry_points.hpp"
#include "transport/device_buffer.hpp"
#include "transport/host_staging.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace commlens::runtime {

namespace {

void forget_communicator(MPI_Comm comm) {
  if (runtime_state().nonblocking) {
    runtime_state().nonblocking->forget(comm); // its lane's jobs use the engine
  }
  runtime_state().engines.forget(comm);
  if (runtime_state().p2p) {
    runtime_state().p2p->forget(comm);
  }
}

void finish() {
  RuntimeState& state = runtime_state();
  contract::CollectorHooks& hooks = *state.host.hooks;
  hooks.runtime = {};
  hooks.staging = {};
  hooks.slots[static_cast<int>(contract::Collector::Runtime)] = {};
  if (state.p2p) {
    state.p2p->finalize(); // waits for its rendezvous replies while the channel is still open
  }
  if (state.nonblocking) {
    state.nonblocking->finalize(); // its rows go into this flush
  }
  state.records->flush();
  state.tree_scratch.trim();
  report_resident_calls(state);
  if (state.noise) {
    state.host.set_run_value(
        fmt::format("noise.rank{}", state.host.world_rank),
        fmt::format("{} delays, {:.3f} ms in all", state.noise->delays(), state.noise->injected_ns() / 1e6));
  }
  const IpcCacheStats stats = state.cache.stats();
  state.host.set_run_value("runtime_ipc_cache",
                           fmt::format("hits={} misses={} evictions={} open_ms={:.3f} background_opens={}",
                                       stats.hits, stats.misses, stats.evictions, stats.open_ns / 1e6,
                                       stats.background_opens));
  state.engines.clear();
  state.cache.close_all();
  const IpcCacheStats closed = state.cache.stats();
  state.host.set_run_value("runtime_ipc_memory",
                           fmt::format("peak {:.1f} MiB mapped, {:.1f} MiB after finalize",
                                       stats.peak_mapped_bytes / 1048576.0, closed.mapped_bytes / 1048576.0));
}

// The name of the GPU the shipped table is picked for (device 0: the nodes are assumed to hold one
// kind of GPU, as every rank must pick the same table); empty without one.
std::string gpu_name() {
  cudaDeviceProp properties{};
  return cudaGetDeviceProperties(&properties, 0) == cudaSuccess ? std::string(properties.name)
                                                                : std::string();
}

// The tuning table and the settings that override it; a bad COMMLENS_RUNTIME_TUNING file is said
// once (rank 0) and the shipped table used, and the run table says which table ran either way.
void load_tuning(RuntimeState& state, const contract::CudaPluginHost& host) {
  tuning::LoadedTable loaded = tuning::load_table(gpu_name(), host.runtime.tuning_file);
  if (!loaded.problem.empty() && host.world_rank == 0) {
    fmt::print(stderr, "commlens: COMMLENS_RUNTIME_TUNING={}: {}; using the shipped table ({})\n",
               host.runtime.tuning_file, loaded.problem, loaded.named.name);
  }
  host.set_run_value("runtime_tuning", loaded.description);
  // The settings were checked where they were read: the algorithm is auto or one of
  // tuning::kAlgorithms, the selection static, dynamic or sweep.
  state.selection = selection::Selector(
      std::move(loaded.named),
      {.allreduce = {tuning::parse_algorithm(host.runtime.algorithm), host.runtime.host_percent},
       .resident_bytes = host.runtime.resident_bytes,
       .dynamic = host.runtime.select != "static",
       .sweep = host.runtime.select == "sweep",
       .tree_streams = host.runtime.tree_streams,
       .resident_max_ranks = resident::kMaxRanks});
}

// COMMLENS_NOISE on the ranks it names (a bad value is said once, by rank 0, and nothing injected)
// and COMMLENS_RUNTIME_TREE_PROGRESS.
void load_tree_settings(RuntimeState& state, const contract::CudaPluginHost& host) {
  state.blocking_trees = host.runtime.tree_progress == "blocking";
  if (host.noise.empty()) {
    return;
  }
  std::string error;
  const std::optional<noise::NoiseSettings> settings = noise::parse_noise(host.noise, &error);
  if (!settings) {
    if (host.world_rank == 0) {
      fmt::print(stderr, "commlens: COMMLENS_NOISE={}: {}; no noise injected\n", host.noise, error);
    }
    host.set_run_value("noise", "rejected: " + error);
    return;
  }
  host.set_run_value("noise", noise::describe(*settings) + ", at the rooted collectives' entries and loops");
  if (noise::applies_to(*settings, host.world_rank)) {
    state.noise = std::make_unique<NoiseInjector>(*settings, host.world_rank);
  }
}

// At every recorded MPI call: the baselines of nonblocking collectives whose ranks declined in
// their jobs are posted as early as the calling thread can (nonblocking_collectives.hpp).
void progress_at_call(std::uint64_t /*call_id*/, FunctionId /*function*/) noexcept {
  runtime_state().nonblocking->progress();
}

// COMMLENS_RUNTIME_COLLECTIVES names whose calls run through NonblockingCollectives.
bool is_nonblocking_name(const std::string& name) {
  return std::ranges::find(contract::kNonblockingRuntimeCollectives, name) !=
         std::end(contract::kNonblockingRuntimeCollectives);
}

// The wait/test hooks: the nonblocking collectives' requests, then point-to-point's.
void install_request_hooks(contract::RuntimeEntries& entries) {
  entries.finish_request = [](std::uint64_t request_key, MPI_Status* status) {
    RuntimeState& state = runtime_state();
    if (state.nonblocking && state.nonblocking->knows(request_key)) {
      return state.nonblocking->finish_request(request_key);
    }
    return state.p2p ? state.p2p->finish_request(request_key, status) : MPI_SUCCESS;
  };
  entries.request_freed = [](std::uint64_t request_key) {
    RuntimeState& state = runtime_state();
    if (state.nonblocking && state.nonblocking->knows(request_key)) {
      state.nonblocking->request_freed(request_key);
    } else if (state.p2p) {
      state.p2p->request_freed(request_key);
    }
  };
  entries.tracks = [](std::uint64_t request_key) {
    RuntimeState& state = runtime_state();
    if (state.nonblocking && state.nonblocking->knows(request_key)) {
      return state.nonblocking->tracks(request_key);
    }
    return state.p2p ? state.p2p->tracks(request_key) : contract::RequestWork::None;
  };
  entries.progress_requests = [] {
    const auto& nonblocking = runtime_state().nonblocking;
    return nonblocking != nullptr && nonblocking->progress();
  };
}

} // namespace

const char* start_runtime(const contract::CudaPluginHost& host) {
  if (host.runtime.mode == RuntimeMode::Off) {
    return nullptr;
  }
  RuntimeState& state = runtime_state();
  state.host = host;
  state.mode = host.runtime.mode;
  state.cuda_aware = mpi_is_cuda_aware();
  state.records = std::make_unique<RuntimeRecords>(state.host);
  use_location_cache(host.hooks->buffer_location); // set by the CUDA collector, which starts first
  load_tuning(state, host);
  load_tree_settings(state, host);
  state.resident_linger_ns = std::uint64_t{host.runtime.resident_linger_us} * 1000;
  if (host.runtime_channel != nullptr) {
    state.p2p =
        std::make_unique<PointToPoint>(state.host, state.mode, state.cache, *state.records,
                                       StripeSettings{state.selection.table().table.point_to_point,
                                                      state.selection.settings().allreduce.host_percent});
  }
  // The `runtime` functions of mpi_functions.spec: point-to-point when its channel is open (the
  // core opens it when COMMLENS_RUNTIME_COLLECTIVES names p2p), each collective when named there.
  const auto& collectives = host.runtime.collectives;
  const auto named = [&](std::string_view name) {
    return std::find(collectives.begin(), collectives.end(), name) != collectives.end();
  };
  if (std::any_of(collectives.begin(), collectives.end(), is_nonblocking_name)) {
    state.nonblocking =
        std::make_unique<NonblockingCollectives>(state.host, *state.records, state.cuda_aware);
  }
  contract::RuntimeEntries& entries = host.hooks->runtime;
  install_runtime_entries(entries, [&](std::string_view family, std::string_view entry_name) {
    // `ireduce_scatter` names both nonblocking reduce-scatters, as it did before the block form had
    // a name of its own.
    return family == contract::kPointToPointName   ? state.p2p != nullptr
           : entry_name == "ireduce_scatter_block" ? named("ireduce_scatter") || named(entry_name)
                                                   : named(entry_name);
  });
  if (state.p2p || state.nonblocking) {
    install_request_hooks(entries);
  }
  // Every other call that takes a buffer stages its device buffers through host memory
  // (collectors/runtime_dispatch/device_staging.hpp): a library that is not CUDA-aware would crash on them.
  if (!state.cuda_aware) {
    host.hooks->staging = device_staging_ops();
  }
  host.hooks->slots[static_cast<int>(contract::Collector::Runtime)] = {
      state.nonblocking ? progress_at_call : nullptr, nullptr, nullptr, forget_communicator, finish};
  host.set_run_value("runtime", host.runtime.mode == RuntimeMode::AB ? "ab" : "on");
  host.set_run_value("runtime_baseline",
                     state.cuda_aware ? "pmpi (CUDA-aware MPI)" : "host staging (MPI not CUDA-aware)");
  return nullptr;
}

} // namespace commlens::runtime
