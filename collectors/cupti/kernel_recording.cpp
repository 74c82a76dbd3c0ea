#include "kernel_recording.hpp"

#include "api_record_selection.hpp"
#include "plugin_context.hpp"

#include <cupti.h>

#include <mutex>
#include <optional>
#include <vector>

namespace commlens::cuda {

namespace {

constexpr CUpti_ActivityKind kKernelDetailKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

std::mutex mutex;
std::optional<KernelSchedule> schedule;
bool on = false;
std::uint64_t on_since_ns = 0;
std::vector<std::vector<SqlValue>> spans;

bool switch_cupti(bool enable) {
  bool ok = true;
  for (const CUpti_ActivityKind kind : kKernelDetailKinds) {
    ok = cupti_ok(enable ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind),
                  enable ? "cuptiActivityEnable" : "cuptiActivityDisable") &&
         ok;
  }
  return set_api_records(ApiRecords::KernelDetail, enable) && ok;
}

// Under the mutex.
bool apply(bool want) {
  if (want == on) {
    return true;
  }
  const std::uint64_t now = host().now_ns();
  if (!want) {
    spans.push_back({std::int64_t{host().run_rank}, relative_ns(on_since_ns), relative_ns(now)});
  }
  on = want;
  on_since_ns = now;
  return switch_cupti(want);
}

} // namespace

bool start_kernel_recording(const KernelSchedule& initial) {
  const std::lock_guard lock(mutex);
  schedule = initial;
  host().set_run_value("cuda_kernels", schedule->describe());
  return apply(schedule->recording());
}

void kernel_recording_phase_begun(int level) noexcept {
  const std::lock_guard lock(mutex);
  if (schedule) {
    apply(schedule->phase_begun(level));
  }
}

void finish_kernel_recording() {
  const std::lock_guard lock(mutex);
  if (!schedule) {
    return;
  }
  apply(false);
  host().set_run_value("training_steps_marked", std::to_string(schedule->steps()));
  if (!spans.empty()) {
    host().store_rows("INSERT INTO kernel_recording (rank, start_ns, end_ns) VALUES (?,?,?)",
                      std::move(spans));
    spans.clear();
  }
  schedule.reset();
}

} // namespace commlens::cuda
