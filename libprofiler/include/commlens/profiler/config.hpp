#pragma once
// Profiler settings from COMMLENS_* environment variables (and an optional KEY=VALUE file named by
// COMMLENS_CONFIG, whose values the environment overrides). Every bad value is reported once, with
// the variable and the accepted values, and replaced by its default: profiling goes on.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens {

enum class Mode { Summary, Trace };
// Whether every rank's output folder is rank 0's (a shared file system): found out at
// MPI_Finalize (auto), or said. Where it is not, the ranks' data reaches rank 0 over MPI.
enum class SharedOutput { Auto, Yes, No };
// The embedded GPU collective runtime (runtime/): off, on for every eligible call, or ab, which
// alternates runtime and baseline call by call for each call signature so both land in one trace.
enum class RuntimeMode { Off, On, AB };
// What the runtime implements; COMMLENS_RUNTIME_COLLECTIVES picks among them. p2p (device-buffer
// point-to-point) is not on by default: a probe of a message that went through its rendezvous sees
// the rendezvous header's size (docs/runtime.md). The nonblocking names (iallreduce, iallgather,
// ireduce_scatter, ibcast) are not implied by the blocking ones: their work runs on threads of the runtime's.
inline constexpr const char* kRuntimeCollectives =
    "allreduce,bcast,reduce,allgather,gather,scatter,alltoall,reduce_scatter_block,reduce_scatter,p2p,"
    "iallreduce,iallgather,ireduce_scatter,ibcast";
inline constexpr const char* kRuntimeDefaultCollectives = "allreduce";
// COMMLENS_RUNTIME_ALGORITHM: auto (the tuning table's choice) or one algorithm forced where safe.
inline constexpr const char* kRuntimeAlgorithms = "auto,one_shot,two_shot,one_shot_striped";

// The pvars sampled unless COMMLENS_PVARS says otherwise: receive-queue lengths, match attempts and
// matching times (Open MPI ob1 and MPICH names) and Open MPI's monitoring counters (present only with
// --mca pml_monitoring_enable 1). A trailing '*' matches every name with that prefix.
inline constexpr const char* kDefaultPvars =
    "pml_ob1_unexpected_msgq_length,pml_ob1_posted_recvq_length,pml_monitoring_messages_*,"
    "coll_monitoring_messages_*,unexpected_recvq_length,posted_recvq_length,unexpected_recvq_match_attempts,"
    "posted_recvq_match_attempts,time_matching_unexpectedq,time_failed_matching_postedq";
// "a, b,c" -> {"a", "b", "c"}; empty names are dropped.
std::vector<std::string> split_names(std::string_view list);

struct CollectorSet {
  bool pmpi = true;
  bool mpit = true;
  bool cupti = true;
  bool nvtx = true;
};

// Which CUDA kernels the CUDA collector records one by one: none (off), those of the kernel steps
// (steps) or every kernel (all). Once CUPTI has recorded kernels, every later launch of the process
// costs more, also after the records are switched off (docs/performance.md): recording them is the
// user's choice.
enum class KernelRecording { Off, Steps, All };

// Training steps, numbered from 1 in the order the program marks them (MPI_Pcontrol(2) or an NVTX
// range named as COMMLENS_STEP_RANGE says), first to last inclusive.
struct StepSpan {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  bool operator==(const StepSpan&) const = default;
};
// "6-8,100" -> {{6, 8}, {100, 100}}; nullopt for anything else (empty, 0, a span that ends before
// it starts, spans out of order or overlapping).
std::optional<std::vector<StepSpan>> parse_step_spans(std::string_view text);

struct Config {
  std::string output_directory = "commlens-output"; // COMMLENS_OUTPUT
  Mode mode = Mode::Summary;                        // COMMLENS_MODE=summary|trace
  CollectorSet collectors;                          // COMMLENS_COLLECTORS=pmpi,mpit,cupti,nvtx | all | none
  std::size_t buffer_events = 1u << 14;             // COMMLENS_BUFFER_EVENTS, per thread (64 B each)
  std::size_t summary_slots = 1u << 12;             // COMMLENS_SUMMARY_SLOTS, per thread
  std::uint32_t flush_interval_ms = 500;            // COMMLENS_FLUSH_MS, 10..1000
  bool merge_at_finalize = true;                    // COMMLENS_MERGE=1|0
  bool quiet = false;                               // COMMLENS_QUIET=1|0: no banner at finalize
  bool keep_rank_files = false; // COMMLENS_KEEP_RANK_FILES=1|0: keep rank-NNNNN.sqlite after the merge
  // In trace mode, each rank encodes its own trace rows' pages and timeline tiles at MPI_Finalize,
  // which the merge then copies (trace_pages.hpp).
  bool rank_pages = true;                          // COMMLENS_RANK_PAGES=1|0
  SharedOutput shared_output = SharedOutput::Auto; // COMMLENS_SHARED_OUTPUT=auto|yes|no
  // Under an MPI launcher, start at the first NCCL call when MPI_Init has not run yet, for jobs that
  // never call it (a PyTorch job started by mpirun); otherwise MPI_Init starts the profiler.
  bool start_at_nccl = false; // COMMLENS_START_AT_NCCL=1|0
  // CUDA collector: per-kernel records (and the launch, memset and synchronisation records that go
  // with them) only where they pay for themselves; copies are always recorded.
  KernelRecording kernels = KernelRecording::Off; // COMMLENS_KERNELS=off|steps|all
  std::vector<StepSpan> kernel_steps = {{6, 8}};  // COMMLENS_KERNEL_STEPS
  // An NVTX range (default domain) whose name is this, alone or followed by a number ("step",
  // "step 12", "step#12", case ignored), marks a training step like MPI_Pcontrol(2); empty: none.
  std::string step_range = "step"; // COMMLENS_STEP_RANGE
  // MPI_T collector. Names of pvars to sample ('*' suffix: prefix match; "all", "none", "default").
  std::vector<std::string> pvars = split_names(kDefaultPvars); // COMMLENS_PVARS
  std::uint32_t pvar_period_ms = 100;                          // COMMLENS_PVAR_PERIOD_MS, 1..60000
  // MPI functions at whose entry and exit the pvars are also sampled (none by default: each sample
  // reads every handle, too much for calls made millions of times).
  std::vector<std::string> pvar_calls; // COMMLENS_PVAR_CALLS=MPI_Barrier,MPI_Waitall,...
  // GPU collective runtime (applies to device buffers only; needs libcommlens_cuda.so and a GPU).
  RuntimeMode runtime = RuntimeMode::Off; // COMMLENS_RUNTIME
  std::vector<std::string> runtime_collectives =
      split_names(kRuntimeDefaultCollectives); // COMMLENS_RUNTIME_COLLECTIVES
  // Share of a large two-rank allreduce sent over the host path beside NVLink, in percent (0: no
  // striping). Unset: the tuning table's share (0 in the shipped tables; docs/runtime.md says why).
  std::optional<std::uint32_t> runtime_host_percent; // COMMLENS_RUNTIME_HOST_PERCENT, 0..50
  std::string runtime_algorithm = "auto";            // COMMLENS_RUNTIME_ALGORITHM, one of kRuntimeAlgorithms
  // A tuning table (JSON, docs/runtime.md) replacing the shipped one; empty: the shipped one.
  std::string runtime_tuning_file; // COMMLENS_RUNTIME_TUNING
  // The node's file of measured copy paths (docs/runtime.md); empty: paths-HOST.json in the user's
  // cache directory; "off": neither measured nor read.
  std::string runtime_paths; // COMMLENS_RUNTIME_PATHS
  // A call that would first have to open a peer's buffer (about 2.3 ms per CUDA IPC handle between
  // GPUs) and would take less on the host path runs there while the handle opens in the
  // background. Off by default: on one GPU opens cost far less and it measured no gain.
  bool runtime_background_opens = false; // COMMLENS_RUNTIME_BACKGROUND_OPENS
  // Treat every N consecutive ranks of MPI_COMM_WORLD as one node (0: the real nodes), so the
  // runtime's hierarchical algorithm can be tested on one machine (as MPICH's
  // MPIR_CVAR_NUM_CLIQUES does for its own).
  std::uint32_t runtime_ranks_per_node = 0; // COMMLENS_RUNTIME_RANKS_PER_NODE
  // How the rooted collectives' trees progress: event (each rank as its neighbours' segments
  // arrive) or blocking (one segment at a time, every rank in a barrier after each: the comparison).
  std::string runtime_tree_progress = "event"; // COMMLENS_RUNTIME_TREE_PROGRESS
  std::optional<std::uint32_t>
      runtime_tree_streams; // COMMLENS_RUNTIME_TREE_STREAMS, 1..8 (unset: the table's)
  // Ranks sharing one GPU under MPS run calls whose largest contribution of a rank is at most this
  // many bytes on the resident kernel (docs/runtime.md); 0: never. Each communicator that uses it
  // holds two halves of this size per rank in GPU memory.
  std::uint64_t runtime_resident_bytes = 262144; // COMMLENS_RUNTIME_RESIDENT_BYTES
  // How long the resident kernel waits for the next call before it leaves the GPU (a program's
  // cudaDeviceSynchronize waits for it at most this long).
  std::uint32_t runtime_resident_linger_us = 1000; // COMMLENS_RUNTIME_RESIDENT_LINGER_US
  // How the runtime picks algorithms and settings: static (the tuning table), dynamic (measured
  // in turns at run time per operation and size bucket, agreed by the ranks; docs/runtime.md) or
  // sweep (every candidate in turn, never deciding: what `commlens tune` measures with).
  std::string runtime_select = "static"; // COMMLENS_RUNTIME_SELECT
  // Injected system noise, HZ:MAX_MS[:RANKS] (docs/runtime.md); empty: none. The runtime parses it
  // (and says in the run table what is wrong with it) when it starts.
  std::string noise; // COMMLENS_NOISE

  // Every COMMLENS_* key this run was configured with, as given (stored in the run table).
  std::map<std::string, std::string> raw;

  using Lookup = std::function<const char*(const char*)>;
  using Warn = std::function<void(const std::string&)>;
  // lookup defaults to getenv; warn receives one complete message per bad value.
  static Config from_environment(const Warn& warn, const Lookup& lookup = nullptr);
};

const char* mode_name(Mode mode) noexcept;
const char* kernel_recording_name(KernelRecording recording) noexcept;
// "6-8,100" (the inverse of parse_step_spans). Inline: the CUDA plugin names the spans too, and
// links nothing of the profiler.
inline std::string step_spans_text(const std::vector<StepSpan>& spans) {
  std::string text;
  for (const StepSpan& span : spans) {
    text += (text.empty() ? "" : ",") + std::to_string(span.first);
    if (span.last != span.first) {
      text += "-" + std::to_string(span.last);
    }
  }
  return text;
}
const char* runtime_mode_name(RuntimeMode mode) noexcept;

} // namespace commlens
