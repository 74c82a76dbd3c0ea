#pragma once
// The contract between libcommlens.so and libcommlens_cuda.so. The core dlopen()s the plugin and
// calls its one C entry point with this table; the plugin reaches the profiler only through it,
// because the profiler's symbols are hidden inside libcommlens.so (a second copy linked into the
// plugin would be a second profiler). Both sides are built from one tree, so C++ types may cross.
#include "collector_hooks.hpp"
#include "commlens/profiler/profiler.hpp"
#include "runtime_channel.hpp"
#include "runtime_settings.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::contract {

inline constexpr int kCudaPluginAbiVersion = 18;
inline constexpr const char* kCudaPluginFile = "libcommlens_cuda.so";
inline constexpr const char* kCudaPluginStartSymbol = "commlens_cuda_plugin_start";

struct CudaPluginHost {
  int abi_version = kCudaPluginAbiVersion;
  int world_rank = 0; // in this job's MPI_COMM_WORLD (what the runtime's MPI calls use)
  int run_rank = 0;   // what rows store in their rank column (ProcessIdentity::run_rank)
  bool cupti = false; // COMMLENS_COLLECTORS names cupti
  bool nvtx = false;  // COMMLENS_COLLECTORS names nvtx
  KernelRecording kernels = KernelRecording::Off;  // COMMLENS_KERNELS
  std::vector<StepSpan> kernel_steps;              // COMMLENS_KERNEL_STEPS
  CopySource cuda_copies = CopySource::Auto;       // COMMLENS_CUDA_COPIES
  std::string step_range;                          // COMMLENS_STEP_RANGE (empty: none)
  Mode mode = Mode::Summary;                       // COMMLENS_MODE
  RuntimeSettings runtime;                         // COMMLENS_RUNTIME* (runtime_settings.hpp)
  std::string noise;                               // COMMLENS_NOISE (empty: none)
  const RuntimeChannel* runtime_channel = nullptr; // open when COMMLENS_RUNTIME_COLLECTIVES names p2p
  std::uint64_t init_ns = 0; // profiler time of MPI_Init; rows store times relative to it
  CollectorHooks* hooks = nullptr;
  // The profiler's clock (CLOCK_MONOTONIC scale), also handed to CUPTI as its timestamp source.
  std::uint64_t (*now_ns)() noexcept = nullptr;
  void (*store_rows)(std::string insert_sql, std::vector<std::vector<SqlValue>> rows) = nullptr;
  void (*set_run_value)(const std::string& key, const std::string& value) = nullptr;
  // An NVTX step range began (level 2) or ended (level 3): opens the next phase unless the program
  // marks its phases with MPI_Pcontrol (phase_marks.hpp). Returns whether a phase began.
  bool (*begin_phase)(int level) noexcept = nullptr;
  // The phase calls are in now.
  std::uint16_t (*phase)() noexcept = nullptr;
  std::vector<FunctionDescription> functions; // names by FunctionId
  // The job-wide communicators.id of a communicator the PMPI collector registered, else -1.
  std::int64_t (*communicator_id)(MPI_Comm comm) noexcept = nullptr;
};

// Returns null when the collectors and the runtime that were asked for started, else why they did
// not (a static string).
using CudaPluginStart = const char* (*)(const CudaPluginHost* host);

} // namespace commlens::contract
