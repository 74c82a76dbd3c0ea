#include "runtime_plugin.hpp"

#include "allreduce_entry.hpp"
#include "device_buffer.hpp"
#include "host_staging.hpp"
#include "p2p_entries.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace commlens::runtime {

namespace {

void forget_communicator(MPI_Comm comm) {
  runtime_state().engines.forget(comm);
  if (runtime_state().p2p) {
    runtime_state().p2p->forget(comm);
  }
}

void finish() {
  RuntimeState& state = runtime_state();
  pmpi::CollectorHooks& hooks = *state.host.hooks;
  hooks.runtime = {};
  hooks.staging = {};
  hooks.slots[static_cast<int>(pmpi::Collector::Runtime)] = {};
  if (state.p2p) {
    state.p2p->finalize(); // waits for its rendezvous replies while the channel is still open
  }
  state.records->flush();
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

FunctionId function_id(const pmpi::CudaPluginHost& host, const char* name) {
  const auto found =
      std::find_if(host.functions.begin(), host.functions.end(), [&](const FunctionDescription& function) {
        return std::string_view(function.name) == name;
      });
  return static_cast<FunctionId>(found - host.functions.begin());
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
void load_tuning(RuntimeState& state, const pmpi::CudaPluginHost& host) {
  tuning::LoadedTable loaded = tuning::load_table(gpu_name(), host.runtime_tuning_file);
  if (!loaded.problem.empty() && host.world_rank == 0) {
    fmt::print(stderr, "commlens: COMMLENS_RUNTIME_TUNING={}: {}; using the shipped table ({})\n",
               host.runtime_tuning_file, loaded.problem, loaded.named.name);
  }
  host.set_run_value("runtime_tuning", loaded.description);
  state.tuning = std::move(loaded.named);
  // config.cpp accepted only auto or an algorithm's name.
  state.tuning_settings = {tuning::parse_algorithm(host.runtime_algorithm), host.runtime_host_percent};
}

} // namespace

const char* start_runtime(const pmpi::CudaPluginHost& host) {
  if (host.runtime == RuntimeMode::Off) {
    return nullptr;
  }
  RuntimeState& state = runtime_state();
  state.host = host;
  state.mode = host.runtime;
  state.cuda_aware = mpi_is_cuda_aware();
  state.allreduce_function = function_id(host, "MPI_Allreduce");
  state.records = std::make_unique<RuntimeRecords>(state.host);
  use_location_cache(host.hooks->buffer_location); // set by the CUDA collector, which starts first
  load_tuning(state, host);
  const auto& collectives = host.runtime_collectives;
  if (std::find(collectives.begin(), collectives.end(), "allreduce") != collectives.end()) {
    host.hooks->runtime.allreduce = allreduce_entry;
  }
  if (host.runtime_channel != nullptr) {
    state.p2p = std::make_unique<PointToPoint>(
        state.host, state.mode, state.cache, *state.records,
        StripeSettings{state.tuning.table.point_to_point, state.tuning_settings.host_percent});
    state.p2p_functions = {.send = function_id(host, "MPI_Send"),
                           .ssend = function_id(host, "MPI_Ssend"),
                           .rsend = function_id(host, "MPI_Rsend"),
                           .bsend = function_id(host, "MPI_Bsend"),
                           .issend = function_id(host, "MPI_Issend"),
                           .irsend = function_id(host, "MPI_Irsend"),
                           .ibsend = function_id(host, "MPI_Ibsend"),
                           .send_init = function_id(host, "MPI_Send_init"),
                           .ssend_init = function_id(host, "MPI_Ssend_init"),
                           .rsend_init = function_id(host, "MPI_Rsend_init"),
                           .bsend_init = function_id(host, "MPI_Bsend_init"),
                           .start = function_id(host, "MPI_Start"),
                           .startall = function_id(host, "MPI_Startall"),
                           .recv = function_id(host, "MPI_Recv"),
                           .isend = function_id(host, "MPI_Isend"),
                           .irecv = function_id(host, "MPI_Irecv"),
                           .sendrecv = function_id(host, "MPI_Sendrecv"),
                           .sendrecv_replace = function_id(host, "MPI_Sendrecv_replace"),
                           .mrecv = function_id(host, "MPI_Mrecv"),
                           .imrecv = function_id(host, "MPI_Imrecv"),
                           .recv_init = function_id(host, "MPI_Recv_init")};
    install_point_to_point_entries(host.hooks->runtime);
  }
  // Every other call that takes a buffer stages its device buffers through host memory
  // (collectors/pmpi/device_staging.hpp): a library that is not CUDA-aware would crash on them.
  if (!state.cuda_aware) {
    host.hooks->staging = device_staging_ops();
  }
  host.hooks->slots[static_cast<int>(pmpi::Collector::Runtime)] = {nullptr, nullptr, nullptr,
                                                                   forget_communicator, finish};
  host.set_run_value("runtime", host.runtime == RuntimeMode::AB ? "ab" : "on");
  host.set_run_value("runtime_baseline",
                     state.cuda_aware ? "pmpi (CUDA-aware MPI)" : "host staging (MPI not CUDA-aware)");
  return nullptr;
}

} // namespace commlens::runtime
