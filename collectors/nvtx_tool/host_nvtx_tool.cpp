// libcommlens.so as NVTX's tool where CUPTI is not: COMMLENS_COLLECTORS asks for NVTX ranges but not
// for the CUDA collector (the cheap set pmpi,mpit,nvtx), or the build has no CUDA plugin. NVTX then
// loads libcommlens.so itself (cuda_plugin_loader.cpp names it in NVTX_INJECTION64_PATH) and calls
// the functions below at every push and pop of its default domain. A step range
// (COMMLENS_STEP_RANGE, step_ranges.hpp) opens the profiler's next phase at level 2 and its pop one
// at level 3, as MPI_Pcontrol(2) and (3) would and as the CUPTI collector does where it is the tool
// (collectors/cupti/nvtx_steps.cpp). So a job profiled without CUPTI, which costs its launches
// nothing, still has its training steps. The ranges themselves go into nvtx_ranges, as CUPTI's
// records of them do (the report's NVTX phases: forward, backward, ... inside the steps).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "mpi_header.hpp"
#include "phase_marks.hpp"
#include "step_ranges.hpp"

#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/config.hpp"
#include "commlens/profiler/profiler.hpp"
#include "commlens/profiler/rank_records.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace commlens::pmpi {
namespace {

// The configured step range's name, read once when the first module loads the tool.
std::string step_range_name;
// One thread's open ranges of the default domain: NVTX nests push and pop per thread.
thread_local cuda::StepRangeNesting nesting;

// A thread's open ranges with their start, and its ended ranges as rows of nvtx_ranges. The rows
// go to the profiler when the thread's outermost range ends (a training step, typically) or 256
// have gathered: storing takes the profiler's lock, so not once per range.
struct ThreadRanges {
  struct Open {
    std::string name;
    std::int64_t start_ns = 0;
    Profiler* profiler = nullptr; // the one running at the push; null: not recorded
  };
  std::vector<Open> open;
  std::vector<std::vector<SqlValue>> rows;
  Profiler* rows_for = nullptr;
};
thread_local ThreadRanges ranges;
constexpr std::size_t kRowsPerStore = 256;

void store_ended_ranges() {
  if (!ranges.rows.empty() && Profiler::active() == ranges.rows_for) {
    ranges.rows_for->store_rows(
        "INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES (?,?,?,?,?)",
        std::move(ranges.rows));
  }
  ranges.rows.clear();
}

void mark_phase(bool step_begins, bool step_ends) noexcept {
  if (!step_begins && !step_ends) {
    return;
  }
  // Before MPI_Init (or a job's first NCCL call) no profiler runs: the step is not counted.
  Profiler* const active = Profiler::active();
  if (active == nullptr || !begin_phase(*active, step_begins ? 2 : 3, PhaseMark::NvtxStepRange)) {
    return;
  }
  store_ended_ranges(); // a step's boundary: also where a range around all steps keeps rows waiting
  // The report says what marked the steps (run value step_marks, as the CUDA collector sets it).
  static std::atomic<Profiler*> told{nullptr};
  if (told.exchange(active) != active) {
    active->set_run_value("step_marks",
                          "NVTX ranges named " + step_range_name + " (libcommlens.so as NVTX's tool)");
  }
}

// Each returns what NVTX's own implementation would: the pushed range's nesting level, or the
// popped one's (negative for a pop without a push).
int pushed(const char* name) noexcept {
  const char* const text = name != nullptr ? name : "";
  Profiler* const active = Profiler::active();
  ranges.open.push_back({text, active != nullptr ? active->relative_ns(now_ticks()) : 0, active});
  mark_phase(nesting.pushed(text, step_range_name), false);
  return static_cast<int>(ranges.open.size()) - 1;
}

int NVTX_API range_push_a(const char* message) {
  return pushed(message);
}

int NVTX_API range_push_w(const wchar_t*) {
  return pushed(""); // wide names never name a step (nor do they with CUPTI), but they nest
}

int NVTX_API range_push_ex(const nvtxEventAttributes_t* attributes) {
  const bool ascii = attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII;
  return pushed(ascii ? attributes->message.ascii : "");
}

int NVTX_API range_pop() {
  if (ranges.open.empty()) {
    nesting.popped();
    return -1; // a pop without its push
  }
  ThreadRanges::Open ended = std::move(ranges.open.back());
  ranges.open.pop_back();
  // A range pushed before the profiler started, or under an earlier one, is not stored.
  if (ended.profiler != nullptr && ended.profiler == Profiler::active()) {
    if (ranges.rows_for != ended.profiler) {
      store_ended_ranges();
      ranges.rows_for = ended.profiler;
    }
    ranges.rows.push_back({std::int64_t{ended.profiler->identity().run_rank}, ended.start_ns,
                           ended.profiler->relative_ns(now_ticks()), SqlValue{}, std::move(ended.name)});
  }
  mark_phase(false, nesting.popped());
  if (ranges.open.empty() || ranges.rows.size() >= kRowsPerStore) {
    store_ended_ranges();
  }
  return static_cast<int>(ranges.open.size());
}

template <typename Function> NvtxFunctionPointer as_table_entry(Function function) {
  return reinterpret_cast<NvtxFunctionPointer>(function);
}

} // namespace
} // namespace commlens::pmpi

// NVTX's entry point for its tool, called once per module (each library that includes NVTX) at
// that module's first NVTX call. Returning 0 leaves the module's NVTX calls as no-ops.
extern "C" COMMLENS_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  using namespace commlens::pmpi;
  static const bool steps_asked = [] {
    step_range_name = commlens::Config::from_environment([](const std::string&) {}).step_range;
    return !step_range_name.empty(); // COMMLENS_STEP_RANGE=none
  }();
  if (!steps_asked || get_export_table == nullptr) {
    return 0;
  }
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int last_id = 0; // the table's highest callback id
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &last_id) == 0 || table == nullptr ||
      last_id < NVTX_CBID_CORE_RangePop) {
    return 0;
  }
  *table[NVTX_CBID_CORE_RangePushA] = as_table_entry(&range_push_a);
  *table[NVTX_CBID_CORE_RangePushW] = as_table_entry(&range_push_w);
  *table[NVTX_CBID_CORE_RangePushEx] = as_table_entry(&range_push_ex);
  *table[NVTX_CBID_CORE_RangePop] = as_table_entry(&range_pop);
  return 1;
}
