#pragma once
// The GPU runtime's settings (COMMLENS_RUNTIME*). The host library's loader reads them from the
// COMMLENS_* values the profiler's configuration collected (the environment, then the file named by
// COMMLENS_CONFIG) and hands them to the plugin in CudaPluginHost. They belong to this contract and
// not to libprofiler: the profiler records and stores, and knows nothing of the runtime.
#include "setting_rules.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens {

// The embedded GPU collective runtime (runtime/): off, on for every eligible call, or ab, which
// alternates runtime and baseline call by call for each call signature so both land in one trace.
enum class RuntimeMode { Off, On, AB };
const char* runtime_mode_name(RuntimeMode mode) noexcept;
std::optional<RuntimeMode> parse_runtime_mode(std::string_view text);

} // namespace commlens

namespace commlens::contract {

// What the runtime implements, COMMLENS_RUNTIME_COLLECTIVES picks among: the names generated from
// mpi_functions.spec (runtime_collective_names.hpp), comma-separated. p2p (device-buffer
// point-to-point) is not on by default: a probe of a message that went through its rendezvous sees
// the rendezvous header's size (docs/runtime.md). The nonblocking names (iallreduce, iallgather,
// ireduce_scatter, ibcast) are not implied by the blocking ones: their work runs on threads of the
// runtime's.
const std::string& runtime_collective_list();
inline constexpr const char* kRuntimeDefaultCollectives = "allreduce";
// COMMLENS_RUNTIME_ALGORITHM: auto (the tuning table's choice) or one algorithm forced where safe.
inline constexpr const char* kRuntimeAlgorithms = "auto,one_shot,two_shot,one_shot_striped";

// Applies to device buffers only; needs libcommlens_cuda.so and a GPU.
struct RuntimeSettings {
  RuntimeMode mode = RuntimeMode::Off; // COMMLENS_RUNTIME
  std::vector<std::string> collectives =
      split_names(kRuntimeDefaultCollectives); // COMMLENS_RUNTIME_COLLECTIVES
  // Treat every N consecutive ranks of MPI_COMM_WORLD as one node (0: the real nodes), so the
  // runtime's hierarchical algorithm can be tested on one machine (as MPICH's
  // MPIR_CVAR_NUM_CLIQUES does for its own).
  std::uint32_t ranks_per_node = 0; // COMMLENS_RUNTIME_RANKS_PER_NODE
  // Share of a large two-rank allreduce sent over the host path beside NVLink, in percent (0: no
  // striping). Unset: the tuning table's share (0 in the shipped tables; docs/runtime.md says why).
  std::optional<std::uint32_t> host_percent; // COMMLENS_RUNTIME_HOST_PERCENT, 0..50
  std::string algorithm = "auto";            // COMMLENS_RUNTIME_ALGORITHM, one of kRuntimeAlgorithms
  // A tuning table (JSON, docs/runtime.md) replacing the shipped one; empty: the shipped one. The
  // runtime reads the file (and says what is wrong with it) when it starts.
  std::string tuning_file; // COMMLENS_RUNTIME_TUNING
  // A call that would first have to open a peer's buffer (about 2.3 ms per CUDA IPC handle between
  // GPUs) and would take less on the host path runs there while the handle opens in the
  // background. Off by default: on one GPU opens cost far less and it measured no gain.
  bool background_opens = false; // COMMLENS_RUNTIME_BACKGROUND_OPENS
  // The node's file of measured copy paths (docs/runtime.md); empty: paths-HOST.json in the user's
  // cache directory; "off": neither measured nor read.
  std::string paths; // COMMLENS_RUNTIME_PATHS
  // How the rooted collectives' trees progress: event (each rank as its neighbours' segments
  // arrive) or blocking (one segment at a time, every rank in a barrier after each: the comparison).
  std::string tree_progress = "event";       // COMMLENS_RUNTIME_TREE_PROGRESS
  std::optional<std::uint32_t> tree_streams; // COMMLENS_RUNTIME_TREE_STREAMS, 1..8 (unset: the table's)
  // Ranks sharing one GPU under MPS run calls whose largest contribution of a rank is at most this
  // many bytes on the resident kernel (docs/runtime.md); 0: never. Each communicator that uses it
  // holds two halves of this size per rank in GPU memory.
  std::uint64_t resident_bytes = 262144; // COMMLENS_RUNTIME_RESIDENT_BYTES
  // How long the resident kernel waits for the next call before it leaves the GPU (a program's
  // cudaDeviceSynchronize waits for it at most this long).
  std::uint32_t resident_linger_us = 1000; // COMMLENS_RUNTIME_RESIDENT_LINGER_US
  // How the runtime picks algorithms and settings: static (the tuning table), dynamic (measured
  // in turns at run time per operation and size bucket, agreed by the ranks; docs/runtime.md) or
  // sweep (every candidate in turn, never deciding: what `commlens tune` measures with).
  std::string select = "static"; // COMMLENS_RUNTIME_SELECT
};

// The COMMLENS_RUNTIME* keys of `values` (other keys are left alone); warn receives one complete
// message per bad value, which keeps its default.
RuntimeSettings read_runtime_settings(const std::map<std::string, std::string>& values,
                                      const settings::Warn& warn);

// Every runtime setting's variable, accepted values and default. docs/user-guide.md's settings
// table lists them with the profiler's; a test keeps the table in step with both lists.
std::vector<SettingDescription> runtime_setting_descriptions();

} // namespace commlens::contract
