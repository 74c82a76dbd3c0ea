#include "transport/ipc_handle_cache.hpp"

#include "selection_thresholds.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace commlens::runtime {

namespace {

// The size of the allocation a mapping maps (IPC maps whole allocations); 0 when the driver says
// nothing.
std::size_t allocation_bytes(void* base) {
  CUdeviceptr start = 0;
  std::size_t bytes = 0;
  return cuMemGetAddressRange(&start, &bytes, reinterpret_cast<CUdeviceptr>(base)) == CUDA_SUCCESS ? bytes
                                                                                                   : 0;
}

} // namespace

void IpcHandleCache::insert_locked(int owner_pid, const PublishedBuffer& buffer, void* base) {
  if (!table_.byte_limit_known()) {
    std::size_t free = 0;
    std::size_t total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess && total > 0) {
      table_.set_byte_limit(total / 4);
    }
  }
  table_.add(owner_pid, buffer, base, allocation_bytes(base));
}

bool IpcHandleCache::close(const std::vector<void*>& bases) {
  for (void* base : bases) {
    cudaIpcCloseMemHandle(base);
  }
  return !bases.empty();
}

std::uint64_t IpcHandleCache::call_epoch() const {
  std::lock_guard lock(mutex_);
  return table_.epoch();
}

bool IpcHandleCache::in_flight_locked(int owner_pid, std::uint64_t buffer_id) const {
  return std::ranges::any_of(requests_, [&](const Request& request) {
    return request.owner_pid == owner_pid && request.buffer.buffer_id == buffer_id;
  });
}

IpcHandleCache::Readiness IpcHandleCache::readiness(int owner_pid, const PublishedBuffer& buffer) const {
  std::lock_guard lock(mutex_);
  return readiness_locked(owner_pid, buffer);
}

IpcHandleCache::Readiness IpcHandleCache::readiness_locked(int owner_pid,
                                                           const PublishedBuffer& buffer) const {
  if (table_.contains(owner_pid, buffer.buffer_id)) {
    return Readiness::Mapped;
  }
  if (in_flight_locked(owner_pid, buffer.buffer_id)) {
    return Readiness::Opening;
  }
  return std::ranges::find(refused_, std::pair{owner_pid, buffer.buffer_id}) != refused_.end()
             ? Readiness::RefusedInBackground
             : Readiness::Unmapped;
}

bool IpcHandleCache::opening_costs_more(std::size_t unmapped, std::uint64_t host_path_ns) const {
  std::lock_guard lock(mutex_);
  const std::uint64_t mean_open_ns =
      stats_.misses == 0 ? tuning::kTypicalIpcOpenNs : stats_.open_ns / stats_.misses;
  return unmapped * mean_open_ns > host_path_ns;
}

void IpcHandleCache::open_later(int owner_pid, const PublishedBuffer& buffer, int device) {
  std::lock_guard lock(mutex_);
  if (stopping_ || readiness_locked(owner_pid, buffer) != Readiness::Unmapped ||
      !table_.has_room(requests_.size())) {
    return;
  }
  requests_.push_back({owner_pid, buffer, device});
  if (!worker_.joinable()) {
    worker_ = std::thread([this] { work(); });
  }
  work_ready_.notify_one();
}

// The worker: opens queued handles one at a time, without the lock (an open takes milliseconds,
// and calls keep using the cache meanwhile). A refused open is left to map(), which may close the
// owner's old mappings and retry, something only the calling thread may do.
void IpcHandleCache::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [this] { return stopping_ || !requests_.empty(); });
    if (stopping_) {
      requests_.clear(); // never opened: nobody waits for them any more
      opened_.notify_all();
      return;
    }
    const Request request = requests_.front();
    lock.unlock();
    cudaSetDevice(request.device);
    cudaIpcMemHandle_t handle;
    std::memcpy(&handle, request.buffer.handle, sizeof handle);
    void* base = nullptr;
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
    const auto took = std::chrono::steady_clock::now() - start;
    if (result != cudaSuccess) {
      cudaGetLastError();
    }
    lock.lock();
    if (result == cudaSuccess) {
      insert_locked(request.owner_pid, request.buffer, base);
      stats_.open_ns += static_cast<std::uint64_t>(std::chrono::nanoseconds(took).count());
      ++stats_.misses;
      ++stats_.background_opens;
    } else {
      if (refused_.size() >= capacity_) {
        refused_.clear(); // old entries are of buffers long gone
      }
      refused_.emplace_back(request.owner_pid, request.buffer.buffer_id);
    }
    requests_.pop_front();
    opened_.notify_all();
  }
}

void IpcHandleCache::stop_worker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true; // the worker finishes the open it is in, then leaves
    work_ready_.notify_all();
  }
  if (worker_.joinable()) {
    worker_.join();
  }
}

void* IpcHandleCache::map(int owner_pid, const PublishedBuffer& buffer, std::uint64_t epoch, bool* opened,
                          int* error) {
  std::unique_lock lock(mutex_);
  opened_.wait(lock, [&] { return !in_flight_locked(owner_pid, buffer.buffer_id); });
  *opened = false;
  if (void* base = table_.use(owner_pid, buffer.buffer_id)) {
    ++stats_.hits;
    return static_cast<char*>(base) + buffer.offset;
  }
  close(table_.close_replaced(owner_pid, buffer));
  close(table_.evict(capacity_ - 1, epoch));
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, buffer.handle, sizeof handle);
  void* base = nullptr;
  const auto start = std::chrono::steady_clock::now();
  cudaError_t result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  // Refused: the owner freed allocations this process still maps and made this one over their
  // addresses, starting outside them (else close_replaced had found them), so which one is
  // unknown: every mapping of the owner not in use goes, to reopen on next use.
  if (result != cudaSuccess && close(table_.close_owner(owner_pid, epoch))) {
    cudaGetLastError();
    result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  }
  stats_.open_ns += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  ++stats_.misses;
  if (result != cudaSuccess) {
    cudaGetLastError(); // the runtime's next kernel launch must not report it as its own
    *error = static_cast<int>(result);
    return nullptr;
  }
  *opened = true;
  std::erase(refused_, std::pair{owner_pid, buffer.buffer_id});
  insert_locked(owner_pid, buffer, base);
  close(table_.evict(capacity_, epoch)); // by bytes, now that this allocation's size is known
  return static_cast<char*>(base) + buffer.offset;
}

bool IpcHandleCache::export_handle(void* base, std::uint64_t buffer_id, PublishedBuffer* buffer, int* error) {
  std::lock_guard lock(mutex_);
  buffer->buffer_id = buffer_id;
  buffer->allocation_address = reinterpret_cast<std::uint64_t>(base);
  for (Export& exported : exports_) {
    if (exported.buffer_id == buffer_id) {
      exported.last_use = ++export_clock_;
      exported.checked_sweep = 0;
      std::memcpy(buffer->handle, exported.handle, kHandleBytes);
      return true;
    }
  }
  cudaIpcMemHandle_t handle;
  if (const cudaError_t result = cudaIpcGetMemHandle(&handle, base); result != cudaSuccess) {
    cudaGetLastError(); // pool memory is refused every time: the refusal must not stick
    *error = static_cast<int>(result);
    return false;
  }
  if (exports_.size() >= capacity_) {
    // Nothing to release: a handle is plain bytes.
    exports_.erase(std::ranges::min_element(
        exports_, [](const Export& a, const Export& b) { return a.last_use < b.last_use; }));
  }
  Export exported{base, buffer_id, {}, ++export_clock_};
  std::memcpy(exported.handle, &handle, kHandleBytes);
  exports_.push_back(exported);
  std::memcpy(buffer->handle, &handle, kHandleBytes);
  return true;
}

// A driver query per export would cost every call tens of microseconds with many live buffers, so
// each call checks a few: first those not checked since their last use (a buffer the program
// frees after its last call is one, so it comes up at the next call), then those found alive
// longest ago, each at most once in kRecheckSweeps calls. The exports this call (or another since
// the last sweep) used are not checked: their call's own pointer query found their buffer id.
void IpcHandleCache::publish_freed_exports(FreedExports* freed) {
  constexpr int kChecksPerCall = 4;
  constexpr std::uint64_t kRecheckSweeps = 64;
  std::lock_guard lock(mutex_);
  ++sweep_;
  const auto due = [&](const Export& e) {
    return e.last_use <= swept_clock_ && (e.checked_sweep == 0 || sweep_ - e.checked_sweep >= kRecheckSweeps);
  };
  for (int n = 0; n < kChecksPerCall; ++n) {
    auto oldest = exports_.end();
    for (auto it = exports_.begin(); it != exports_.end(); ++it) {
      if (due(*it) && (oldest == exports_.end() || it->checked_sweep < oldest->checked_sweep)) {
        oldest = it;
      }
    }
    if (oldest == exports_.end()) {
      break;
    }
    unsigned long long current = 0;
    const bool alive = cuPointerGetAttribute(&current, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                             reinterpret_cast<CUdeviceptr>(oldest->base)) == CUDA_SUCCESS &&
                       current == oldest->buffer_id;
    if (alive) {
      oldest->checked_sweep = sweep_;
    } else {
      freed_exports_.ids[freed_exports_.generation++ % kFreedRing] = oldest->buffer_id;
      exports_.erase(oldest);
    }
  }
  swept_clock_ = export_clock_;
  *freed = freed_exports_;
}

void IpcHandleCache::close_freed(int owner_pid, const FreedExports& freed) {
  std::lock_guard lock(mutex_);
  auto seen = std::ranges::find(seen_, owner_pid, &std::pair<int, std::uint64_t>::first);
  if (seen == seen_.end()) {
    seen_.emplace_back(owner_pid, 0);
    seen = std::prev(seen_.end());
  }
  if (freed.generation == seen->second) {
    return;
  }
  if (freed.generation - seen->second > kFreedRing) {
    close(table_.close_owner(owner_pid, table_.epoch())); // fell behind: which ones is unknown
  } else {
    for (std::uint64_t g = seen->second; g < freed.generation; ++g) {
      close(table_.close_buffer(owner_pid, freed.ids[g % kFreedRing]));
    }
  }
  seen->second = freed.generation;
}

void IpcHandleCache::close_all() {
  stop_worker(); // its last open lands in the table before the mappings are closed
  std::lock_guard lock(mutex_);
  close(table_.close_all());
  exports_.clear();
}

IpcCacheStats IpcHandleCache::stats() const {
  std::lock_guard lock(mutex_);
  IpcCacheStats stats = stats_;
  stats.evictions = table_.closed();
  stats.mapped_bytes = table_.bytes();
  stats.peak_mapped_bytes = table_.peak_bytes();
  return stats;
}

} // namespace commlens::runtime
