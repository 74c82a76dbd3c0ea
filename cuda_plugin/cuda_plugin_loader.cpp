#include "cuda_plugin_loader.hpp"

#include "collector_registration.hpp"
#include "communicator_registry.hpp"
#include "cuda_plugin_interface.hpp"
#include "phase_marks.hpp"
#include "runtime_channel.hpp"
#include "runtime_settings.hpp"

#include <algorithm>

#include <cstdlib>
#include <dlfcn.h>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unistd.h>

namespace commlens::pmpi {

namespace {

// Open from MPI_Init to MPI_Finalize when the runtime's p2p part was asked for.
contract::RuntimeChannel runtime_channel;

// The two driver entry points the probe needs, declared here so the core needs no CUDA headers.
using CuInit = int (*)(unsigned int flags);
using CuDeviceGetCount = int (*)(int* count);

using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetAttribute = int (*)(int* value, int attribute, int device);
// CUdevice_attribute values (cuda.h), stable across CUDA versions.
constexpr int kPciBusId = 33;
constexpr int kPciDeviceId = 34;
constexpr int kPciDomainId = 50;

// Empty when the driver loads and reports at least one device, else why not. *visible gets the
// PCI ids of the GPUs this process sees.
std::string probe_cuda_driver(std::vector<contract::PciGpuId>* visible) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    return "no CUDA driver (libcuda.so.1 not loadable)";
  }
  const auto init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  const auto device_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (init == nullptr || device_count == nullptr) {
    return "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
  }
  if (const int rc = init(0); rc != 0) {
    return "cuInit failed with CUresult " + std::to_string(rc) + " (no usable GPU)";
  }
  int count = 0;
  if (device_count(&count) != 0 || count < 1) {
    return "the CUDA driver reports no GPU";
  }
  const auto device_get = reinterpret_cast<CuDeviceGet>(dlsym(driver, "cuDeviceGet"));
  const auto attribute = reinterpret_cast<CuDeviceGetAttribute>(dlsym(driver, "cuDeviceGetAttribute"));
  for (int ordinal = 0; ordinal < count && device_get != nullptr && attribute != nullptr; ++ordinal) {
    int device = 0;
    int domain = 0;
    int bus = 0;
    int slot = 0;
    if (device_get(&device, ordinal) == 0 && attribute(&domain, kPciDomainId, device) == 0 &&
        attribute(&bus, kPciBusId, device) == 0 && attribute(&slot, kPciDeviceId, device) == 0) {
      visible->push_back(static_cast<contract::PciGpuId>(domain) << 16 |
                         static_cast<contract::PciGpuId>(bus) << 8 | static_cast<contract::PciGpuId>(slot));
    }
  }
  return {}; // the driver stays loaded: the plugin uses it next
}

// libcommlens.so's own path; empty when unknown.
std::string host_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&start_cuda_collectors), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

// libcommlens_cuda.so is installed (and built) next to libcommlens.so.
std::string plugin_path() {
  const std::string path = host_library_path();
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + contract::kCudaPluginFile;
}

std::string load_and_start(Profiler& profiler, std::span<const FunctionDescription> functions,
                           const contract::RuntimeSettings& runtime) {
  const std::string path = plugin_path();
  void* plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) {
    const char* error = dlerror();
    return "cannot load " + path + ": " + (error != nullptr ? error : "unknown error");
  }
  const auto start =
      reinterpret_cast<contract::CudaPluginStart>(dlsym(plugin, contract::kCudaPluginStartSymbol));
  if (start == nullptr) {
    return path + " has no " + contract::kCudaPluginStartSymbol;
  }
  contract::CudaPluginHost host;
  host.world_rank = profiler.identity().world_rank;
  host.run_rank = profiler.identity().run_rank;
  host.cupti = profiler.config().collectors.cupti;
  host.nvtx = profiler.config().collectors.nvtx;
  host.kernels = profiler.config().kernels;
  host.kernel_steps = profiler.config().kernel_steps;
  host.cuda_copies = profiler.config().cuda_copies;
  host.step_range = profiler.config().step_range;
  host.mode = profiler.config().mode;
  host.runtime = runtime;
  host.noise = profiler.config().noise;
  host.runtime_channel = runtime_channel.comm != MPI_COMM_NULL ? &runtime_channel : nullptr;
  host.init_ns = profiler.init_ns();
  host.hooks = &contract::collector_hooks();
  // A copy of the profiler's clock: CUPTI keeps asking for timestamps after MPI_Finalize stopped
  // the profiler (the application's last CUDA calls, buffers flushed at exit).
  static std::optional<TickConverter> clock;
  clock.emplace(profiler.clock());
  host.now_ns = []() noexcept { return clock->now_ns(); };
  host.store_rows = [](std::string sql, std::vector<std::vector<SqlValue>> rows) {
    if (Profiler* const active = Profiler::active()) {
      active->store_rows(std::move(sql), std::move(rows));
    }
  };
  host.set_run_value = [](const std::string& key, const std::string& value) {
    if (Profiler* const active = Profiler::active()) {
      active->set_run_value(key, value);
    }
  };
  host.begin_phase = [](int level) noexcept {
    Profiler* const active = Profiler::active();
    return active != nullptr && begin_phase(*active, level, PhaseMark::NvtxStepRange);
  };
  host.phase = []() noexcept -> std::uint16_t {
    Profiler* const active = Profiler::active();
    return active != nullptr ? active->phase() : 0;
  };
  host.functions.assign(functions.begin(), functions.end());
  host.communicator_id = [](MPI_Comm comm) noexcept -> std::int64_t {
    const CommunicatorEntry* entry = find_communicator(comm);
    return entry != nullptr ? entry->id : -1;
  };
  const char* refusal = start(&host);
  return refusal != nullptr ? refusal : "";
}

// Whether COMMLENS_COLLECTORS (unset: all) names this collector.
bool collector_asked(std::string_view collector) {
  const char* text = std::getenv("COMMLENS_COLLECTORS");
  if (text == nullptr || std::string_view(text) == "all") {
    return true;
  }
  const std::vector<std::string> names = split_names(text);
  return std::ranges::find(names, collector) != names.end();
}

// Whether the CUDA collector will attach CUPTI whatever the program is: kernel records, the GPU
// runtime or COMMLENS_CUDA_COPIES=cupti ask for it (config.hpp's CopySource). Read from the
// environment alone: at libcommlens.so's load nothing else is known yet.
bool cupti_surely_attached() {
  const auto setting = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string_view(value != nullptr ? value : "off");
  };
  return setting("COMMLENS_KERNELS") != "off" || setting("COMMLENS_RUNTIME") != "off" ||
         setting("COMMLENS_CUDA_COPIES") == "cupti";
}

// At libcommlens.so's load, before the program's first NVTX call: NVTX loads its tool at each
// module's first call, and in a job without MPI the profiler (and CUPTI) start only at the first
// NCCL call, often inside the first training step. Where the user's NVTX ranges are asked for
// (collector nvtx):
// - where CUPTI will be attached anyway (cupti_surely_attached) and the plugin is built, naming the
//   plugin now makes CUPTI the tool of every module (plugin_entry.cpp forwards NVTX's entry point to
//   CUPTI's): ranges of every domain and steps;
// - otherwise libcommlens.so itself is the tool (collectors/nvtx_tool): steps and the default
//   domain's ranges, and CUPTI is not attached for them. Where the CUDA collector then takes copies
//   from CUPTI (a program with a static libcudart), NVTX stays with libcommlens.so.
// A tool already named (Nsight Systems) is left alone.
__attribute__((constructor)) void name_nvtx_tool() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr || !collector_asked("nvtx")) {
    return;
  }
  const std::string plugin = plugin_path();
  const bool plugin_built = collector_asked("cupti") && access(plugin.c_str(), R_OK) == 0;
  bool host_tool = false;
#ifdef COMMLENS_HOST_NVTX_TOOL
  host_tool = true;
#endif
  if (plugin_built && (cupti_surely_attached() || !host_tool)) {
    setenv("NVTX_INJECTION64_PATH", plugin.c_str(), 0);
    return;
  }
#ifdef COMMLENS_HOST_NVTX_TOOL
  if (const std::string host = host_library_path(); !host.empty()) {
    setenv("NVTX_INJECTION64_PATH", host.c_str(), 0);
  }
#endif
}

// with_mpi: MPI is initialised. The runtime takes MPI calls and needs MPI to set up, so without it
// the runtime stays off; its settings are still read, so bad values are reported alike.
void start_cuda(Profiler& profiler, std::span<const FunctionDescription> functions, bool with_mpi) {
  const Config& config = profiler.config();
  // The runtime's settings, from the same COMMLENS_* values (environment and COMMLENS_CONFIG file)
  // as the profiler's, their warnings said as the profiler's are.
  contract::RuntimeSettings runtime =
      contract::read_runtime_settings(config.raw, settings_warning(profiler.identity().world_rank));
  if (!with_mpi) {
    runtime.mode = RuntimeMode::Off;
  }
  const bool collectors_asked = config.collectors.cupti || config.collectors.nvtx;
  const bool runtime_asked = runtime.mode != RuntimeMode::Off;
  std::string why_off;
  std::vector<contract::PciGpuId> visible_gpus;
  if (collectors_asked || runtime_asked) {
    why_off = probe_cuda_driver(&visible_gpus);
  }
  // Collective: opened on every rank whatever its probe said, so no rank is left waiting.
  const auto& collectives = runtime.collectives;
  if (runtime_asked && std::ranges::find(collectives, "p2p") != collectives.end()) {
    runtime_channel = contract::open_runtime_channel(runtime.ranks_per_node, visible_gpus);
  }
  if (collectors_asked || runtime_asked) {
    if (why_off.empty()) {
      why_off = load_and_start(profiler, functions, runtime);
    }
  }
  if (!collectors_asked) {
    profiler.set_run_value("cuda_collectors", "off");
    profiler.set_run_value("cuda_collectors_reason",
                           "not requested (COMMLENS_COLLECTORS names neither cupti nor nvtx)");
  } else {
    profiler.set_run_value("cuda_collectors", why_off.empty() ? "on" : "off");
    if (!why_off.empty()) {
      profiler.set_run_value("cuda_collectors_reason", why_off);
    }
  }
  // Once started, the plugin records runtime=on|ab itself.
  if (runtime_asked && !why_off.empty()) {
    profiler.set_run_value("runtime", "off");
    profiler.set_run_value("runtime_reason", why_off);
  }
}

} // namespace

void start_cuda_collectors(Profiler& profiler, std::span<const FunctionDescription> functions) {
  start_cuda(profiler, functions, true);
}

void start_cuda_collectors_without_runtime(Profiler& profiler,
                                           std::span<const FunctionDescription> functions) {
  start_cuda(profiler, functions, false);
}

void stop_runtime_channel() {
  contract::close_runtime_channel(runtime_channel);
}

} // namespace commlens::pmpi
