// libcommlens_cuda.so's one entry point: the core calls it after MPI_Init when a GPU is present.
// It starts the CUPTI collector and the NVTX ranges as COMMLENS_COLLECTORS asks and fills the CUDA
// slot of the PMPI collector hooks.
#include "activity_collector.hpp"
#include "api_callbacks.hpp"
#include "buffer_location_cache.hpp"
#include "copy_path_classifier.hpp"
#include "device_spans.hpp"
#include "external_correlation.hpp"
#include "ipc_tracker.hpp"
#include "kernel_recording.hpp"
#include "loaded_cudart.hpp"
#include "mpi_nvtx_ranges.hpp"
#include "nvtx_steps.hpp"
#include "peer_topology.hpp"
#include "plugin/runtime_plugin.hpp"
#include "plugin_context.hpp"
#include "runtime_copies.hpp"
#include "thread_numbers.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace commlens::cuda {

namespace {

bool cupti_on = false;
bool copies_from_calls = false; // runtime_copies.hpp instead of CUPTI
bool mpi_ranges_on = false;     // NVTX ranges for MPI calls
bool api_calls_on = false;      // cuda_api_calls rows (trace mode): their threads are numbered as MPI's
std::optional<PeerTopology> topology;
std::optional<CopyPathClassifier> classifier;
IpcTracker ipc_tracker;

void on_call_enter(std::uint64_t call_id, FunctionId function) noexcept {
  set_current_mpi_call(call_id);
  if (cupti_on) {
    push_mpi_call(call_id);
  }
  if (api_calls_on) {
    note_calling_thread(call_id);
  }
  if (mpi_ranges_on) {
    nvtx::push_mpi_range(function, call_id);
  }
}

void on_call_exit(std::uint64_t, FunctionId, std::uint64_t) noexcept {
  if (mpi_ranges_on) {
    nvtx::pop_mpi_range();
  }
  if (cupti_on) {
    pop_mpi_call();
  }
  set_current_mpi_call(0);
}

void on_finalize() {
  contract::CollectorHooks& hooks = *host().hooks;
  hooks.slots[static_cast<int>(contract::Collector::Cuda)] = {};
  hooks.buffer_location = nullptr;
  if (copies_from_calls) {
    hooks.runtime_calls = {};
    hooks.stream_work = {};
    finish_device_spans();
    store_runtime_copies();
  } else if (cupti_on) {
    hooks.stream_work = {};
    finish_device_spans();
    finish_activity_collection();
    unsubscribe_api_callbacks();
  }
}

// Whether a shared libcudart is loaded: then the program's runtime calls reach libcommlens.so's
// interposed copy functions (collectors/cudart_calls) first.
bool shared_cudart_loaded() {
  return contract::any_loaded_cudart([](const char*) { return true; });
}

struct CopySourceChoice {
  bool from_calls = false;
  std::string why; // for the run table's cuda_copies_source
};

// Where copies come from (COMMLENS_CUDA_COPIES, config.hpp's CopySource).
CopySourceChoice copy_source(const contract::CudaPluginHost& plugin_host) {
  switch (plugin_host.cuda_copies) {
  case CopySource::Cupti:
    return {false, "cupti (COMMLENS_CUDA_COPIES)"};
  case CopySource::Calls:
    return {true, "calls (COMMLENS_CUDA_COPIES)"};
  case CopySource::Auto:
    break;
  }
  if (plugin_host.kernels != KernelRecording::Off) {
    return {false, "cupti (kernel records need it)"};
  }
  if (plugin_host.runtime.mode != RuntimeMode::Off) {
    return {false, "cupti (the GPU runtime's copies do not pass through a shared libcudart)"};
  }
  if (!shared_cudart_loaded()) {
    return {false, "cupti (no shared libcudart loaded: the program's copies cannot be seen from its calls)"};
  }
  return {true, "calls (the program calls a shared libcudart; CUPTI not attached)"};
}

// NVTX ranges named as COMMLENS_STEP_RANGE mark training steps, seen through CUPTI's NVTX callbacks.
std::string start_step_ranges(const contract::CudaPluginHost& plugin_host, bool cupti_is_nvtx_tool) {
  if (plugin_host.step_range.empty()) {
    return "off (COMMLENS_STEP_RANGE=none)";
  }
  if (!cupti_is_nvtx_tool) {
    return "off (the CUDA collector is not NVTX's tool)";
  }
  set_step_range_name(plugin_host.step_range);
  return enable_nvtx_step_callbacks() ? "NVTX ranges named " + plugin_host.step_range
                                      : "off (" + first_error() + ")";
}

// libcommlens.so is NVTX's tool (collectors/nvtx_tool): the run value nvtx_user_ranges says so.
constexpr std::string_view kProfilerIsNvtxTool = "on (libcommlens.so is NVTX's tool: the default domain)";

// A function of this plugin, for its file's name.
void plugin_entry_marker() {}

// The library CUPTI is in, and this plugin's own file.
std::string library_of(const void* symbol) {
  Dl_info info{};
  return dladdr(symbol, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

// Whether NVTX_INJECTION64_PATH names libcommlens.so (the library of the host's clock).
bool nvtx_tool_is_profiler(const contract::CudaPluginHost& plugin_host) {
  const char* named = std::getenv("NVTX_INJECTION64_PATH");
  return named != nullptr && named == library_of(reinterpret_cast<const void*>(plugin_host.now_ns));
}

// CUPTI sees the application's NVTX ranges only when NVTX loads it as its tool; NVTX reads the
// variable at a module's first NVTX call. libcommlens.so names this plugin at its own load
// (cuda_plugin_loader.cpp) when CUPTI will surely be attached, so that modules whose first NVTX call
// comes before the profiler starts (a training step before a job's first NCCL call) load CUPTI
// too; otherwise it names itself (its own tool: steps and the default domain's ranges), and CUPTI
// attached later for copies leaves that so. Where nothing is named yet, CUPTI itself is named here.
// A tool already named (Nsight Systems) is left alone.
std::string attach_cupti_as_nvtx_tool(const contract::CudaPluginHost& plugin_host) {
  const std::string plugin = library_of(reinterpret_cast<const void*>(&plugin_entry_marker));
  const std::string cupti = library_of(reinterpret_cast<const void*>(&cuptiActivityEnable));
  if (const char* named = std::getenv("NVTX_INJECTION64_PATH")) {
    if (nvtx_tool_is_profiler(plugin_host)) {
      return std::string(kProfilerIsNvtxTool);
    }
    return named == plugin || named == cupti ? "on" : "off (NVTX_INJECTION64_PATH names another tool)";
  }
  if (cupti.empty()) {
    return "off (libcupti's path unknown)";
  }
  setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 0);
  return "on";
}

// The GPUs' links, for the copy-path rules of either copy source.
void classify_copies_by_link(const contract::CudaPluginHost& plugin_host) {
  topology = PeerTopology::measure();
  classifier.emplace([](std::uint32_t a, std::uint32_t b) { return topology->link_between(a, b); });
  plugin_host.set_run_value("cuda_peer_links",
                            topology->nvml_available() ? "nvml" : "pcie assumed (NVML not available)");
}

// Copies and IPC from the runtime's calls (runtime_copies.hpp): CUPTI stays detached.
void start_copies_from_calls(const contract::CudaPluginHost& plugin_host) {
  classify_copies_by_link(plugin_host);
  take_stream_ids_from_cupti(false);
  plugin_host.hooks->runtime_calls = runtime_copy_hooks(*classifier, ipc_tracker);
}

const char* start_collectors(const contract::CudaPluginHost& plugin_host) {
  if (!plugin_host.cupti && !plugin_host.nvtx) {
    return nullptr;
  }
  if (plugin_host.cupti) {
    const CopySourceChoice source = copy_source(plugin_host);
    copies_from_calls = source.from_calls;
    plugin_host.set_run_value("cuda_copies_source", source.why);
  }
  cupti_on = plugin_host.cupti && !copies_from_calls;
  api_calls_on = cupti_on && plugin_host.mode == Mode::Trace;
  bool cupti_is_nvtx_tool = false;
  bool profiler_is_nvtx_tool = false;
  if (plugin_host.cupti && plugin_host.nvtx) {
    // Without CUPTI attached, nothing is named here: only libcommlens.so's own tool can be there.
    const std::string attached =
        cupti_on ? attach_cupti_as_nvtx_tool(plugin_host)
        : nvtx_tool_is_profiler(plugin_host)
            ? std::string(kProfilerIsNvtxTool)
            : "off (the CUDA collector is not attached and libcommlens.so is not NVTX's tool)";
    cupti_is_nvtx_tool = attached == "on";
    profiler_is_nvtx_tool = attached == kProfilerIsNvtxTool;
    plugin_host.set_run_value("nvtx_user_ranges", attached);
  }
  const bool user_nvtx = cupti_on && cupti_is_nvtx_tool;
  // The MPI ranges are for another NVTX tool (Nsight Systems). With CUPTI or libcommlens.so as the
  // tool none can be there, and CUPTI would record every range only for the collector to drop it
  // again (they are mpi_calls already): about 0.5 us per MPI call on the H100 machine.
  mpi_ranges_on = plugin_host.nvtx && !cupti_is_nvtx_tool && !profiler_is_nvtx_tool;
  plugin_host.set_run_value("nvtx_mpi_ranges",
                            mpi_ranges_on ? "on"
                            : plugin_host.nvtx
                                ? "off (commlens is the NVTX tool, so no other tool could see them)"
                                : "off");
  if (mpi_ranges_on) {
    nvtx::start_mpi_ranges(plugin_host.functions);
  }
  if (cupti_on) {
    classify_copies_by_link(plugin_host);
    const KernelSchedule kernels(plugin_host.kernels, plugin_host.kernel_steps);
    if (!subscribe_api_callbacks(ipc_tracker) ||
        !start_activity_collection(*classifier, ipc_tracker, kernels, user_nvtx)) {
      static std::string refusal;
      refusal = "CUPTI: " + first_error();
      unsubscribe_api_callbacks();
      return refusal.c_str();
    }
    if (!profiler_is_nvtx_tool) { // else libcommlens.so's tool marks the steps and says so
      plugin_host.set_run_value("step_marks", start_step_ranges(plugin_host, cupti_is_nvtx_tool));
    }
  }
  if (copies_from_calls) {
    start_copies_from_calls(plugin_host);
  }
  contract::CollectorHooks& hooks = *plugin_host.hooks;
  hooks.slots[static_cast<int>(contract::Collector::Cuda)] = {
      on_call_enter, on_call_exit, nullptr,
      nullptr,       on_finalize,  cupti_on ? kernel_recording_phase_begun : nullptr};
  hooks.buffer_location = cached_buffer_location;
  if (cupti_on || copies_from_calls) {
    hooks.stream_work = device_span_hooks();
  }
  return nullptr;
}

const char* start(const contract::CudaPluginHost& plugin_host) {
  set_host(plugin_host);
  if (const char* refusal = start_collectors(plugin_host)) {
    return refusal;
  }
  return runtime::start_runtime(plugin_host);
}

} // namespace

} // namespace commlens::cuda

// NVTX's entry point for its tool (NVTX_INJECTION64_PATH names this plugin): CUPTI's own.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  using Initialize = int (*)(const void*);
  static const auto cupti_initialize = []() -> Initialize {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&cuptiActivityEnable), &info) == 0 ||
        info.dli_fname == nullptr) {
      return nullptr;
    }
    void* cupti = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    return cupti != nullptr ? reinterpret_cast<Initialize>(dlsym(cupti, "InitializeInjectionNvtx2"))
                            : nullptr;
  }();
  return cupti_initialize != nullptr ? cupti_initialize(get_export_table) : 0;
}

extern "C" __attribute__((visibility("default"))) const char*
commlens_cuda_plugin_start(const commlens::contract::CudaPluginHost* host) {
  if (host == nullptr || host->abi_version != commlens::contract::kCudaPluginAbiVersion) {
    return "libcommlens_cuda.so was built for another libcommlens.so (plugin ABI mismatch)";
  }
  return commlens::cuda::start(*host);
}
