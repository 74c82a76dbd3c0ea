#include "kernel_recording.hpp"

#include "api_record_selection.hpp"
#include "plugin_context.hpp"

#include <cupti.h>

#include <atomic>
#include <cstdio>
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
std::uint64_t last_buffer_ns = 0;
std::vector<std::vector<SqlValue>> spans;
// The schedule's answer to a buffer, waiting for the application's next call: CUPTI must not be
// switched from inside its own buffer callback.
std::atomic<bool> switch_waiting{false};
bool stopped_by_rate = false;

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

void say_stopped(double rate) {
  const std::string why = "stopped after " + std::to_string(static_cast<long long>(rate)) +
                          " kernels a second with no training step marked (COMMLENS_KERNEL_RATE_LIMIT=" +
                          std::to_string(host().kernel_rate_limit) + ")";
  host().set_run_value("cuda_kernels_stopped", why);
  if (host().world_rank == 0) {
    std::fprintf(stderr,
                 "commlens: kernel records %s: recording every kernel would slow this program by more than "
                 "about 1%%. Mark training steps (MPI_Pcontrol(2), or an NVTX range named step) to record "
                 "the kernels of chosen steps, or set COMMLENS_KERNELS=all to record them all\n",
                 why.c_str());
  }
}

} // namespace

bool start_kernel_recording(const KernelSchedule& initial) {
  const std::lock_guard lock(mutex);
  schedule = initial;
  last_buffer_ns = host().now_ns();
  host().set_run_value("cuda_kernels", schedule->describe());
  return apply(schedule->recording());
}

void kernel_recording_phase_begun(int level) noexcept {
  const std::lock_guard lock(mutex);
  if (schedule) {
    apply(schedule->phase_begun(level));
  }
}

void kernel_records_arrived(std::uint64_t kernels, std::uint64_t now_ns) {
  const std::lock_guard lock(mutex);
  if (!schedule) {
    return;
  }
  const double seconds = static_cast<double>(now_ns - last_buffer_ns) * 1e-9;
  last_buffer_ns = now_ns;
  if (on && !schedule->kernels_arrived(kernels, seconds)) {
    stopped_by_rate = true;
    switch_waiting.store(true, std::memory_order_release);
  }
}

void apply_waiting_kernel_switch() noexcept {
  if (!switch_waiting.load(std::memory_order_acquire)) [[likely]] {
    return;
  }
  const std::lock_guard lock(mutex);
  switch_waiting.store(false, std::memory_order_relaxed);
  if (schedule) {
    apply(schedule->recording());
    if (stopped_by_rate) {
      stopped_by_rate = false;
      say_stopped(schedule->stopping_rate());
    }
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
    host().store_rows("INSERT INTO kernel_recording (rank, start_ns, end_ns) VALUES (?,?,?)", std::move(spans));
    spans.clear();
  }
  schedule.reset();
}

} // namespace commlens::cuda
