#pragma once
// Profiler settings from COMMLENS_* environment variables (and an optional KEY=VALUE file named by
// COMMLENS_CONFIG, whose values the environment overrides). Every bad value is reported once, with
// the variable and the accepted values, and replaced by its default: profiling goes on. The GPU
// runtime's settings (COMMLENS_RUNTIME*) are not read here: the loader of the CUDA plugin reads them
// from `raw` (contract/runtime_settings.hpp).
#include "setting_rules.hpp" // split_names

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
// The pvars sampled unless COMMLENS_PVARS says otherwise: receive-queue lengths, match attempts and
// matching times (Open MPI ob1 and MPICH names) and Open MPI's monitoring counters (present only with
// --mca pml_monitoring_enable 1). A trailing '*' matches every name with that prefix.
inline constexpr const char* kDefaultPvars =
    "pml_ob1_unexpected_msgq_length,pml_ob1_posted_recvq_length,pml_monitoring_messages_*,"
    "coll_monitoring_messages_*,unexpected_recvq_length,posted_recvq_length,unexpected_recvq_match_attempts,"
    "posted_recvq_match_attempts,time_matching_unexpectedq,time_failed_matching_postedq";

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

// Where the CUDA collector takes the program's copies from. CUPTI sees every copy but, once
// attached, adds about a microsecond to every kernel launch of the process, several percent of a
// launch-heavy training step (docs/performance.md). The CUDA runtime's copy calls, interposed in
// libcommlens.so, cost nothing elsewhere but are seen only where the program calls a shared
// libcudart (PyTorch, CuPy), not in programs that link it statically (nvcc's default) or in
// copies that MPI libraries make through the driver. auto: the calls where libcudart is shared and
// nothing else needs CUPTI (no kernel records, no GPU runtime), else CUPTI.
enum class CopySource { Auto, Cupti, Calls };

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
  CopySource cuda_copies = CopySource::Auto;      // COMMLENS_CUDA_COPIES=auto|cupti|calls
  // An NVTX range (default domain) whose name is this, alone or followed by a number ("step",
  // "step 12", "step#12", case ignored), marks a training step like MPI_Pcontrol(2); empty: none.
  std::string step_range = "step"; // COMMLENS_STEP_RANGE
  // MPI_T collector. Names of pvars to sample ('*' suffix: prefix match; "all", "none", "default").
  std::vector<std::string> pvars = split_names(kDefaultPvars); // COMMLENS_PVARS
  std::uint32_t pvar_period_ms = 100;                          // COMMLENS_PVAR_PERIOD_MS, 1..60000
  // MPI functions at whose entry and exit the pvars are also sampled (none by default: each sample
  // reads every handle, too much for calls made millions of times).
  std::vector<std::string> pvar_calls; // COMMLENS_PVAR_CALLS=MPI_Barrier,MPI_Waitall,...
  // Injected system noise, HZ:MAX_MS[:RANKS] (docs/runtime.md); empty: none. The runtime parses it
  // (and says in the run table what is wrong with it) when it starts.
  std::string noise; // COMMLENS_NOISE

  // Every COMMLENS_* key this run was configured with, as given (stored in the run table), also
  // those of other readers (the runtime's); the environment's value where the file names it too.
  std::map<std::string, std::string> raw;

  using Lookup = std::function<const char*(const char*)>;
  using Warn = settings::Warn;
  // lookup defaults to the whole environment; given, it is asked for Config's own keys only.
  // warn receives one complete message per bad value.
  static Config from_environment(const Warn& warn, const Lookup& lookup = nullptr);
};

const char* mode_name(Mode mode) noexcept;
const char* kernel_recording_name(KernelRecording recording) noexcept;
const char* copy_source_name(CopySource source) noexcept;
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

} // namespace commlens
