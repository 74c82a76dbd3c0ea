#include "ipc_handle_cache.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace commlens::runtime {

namespace {

template <typename Entry> typename std::vector<Entry>::iterator least_recent(std::vector<Entry>& entries) {
  return std::min_element(entries.begin(), entries.end(),
                          [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
}

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
  if (mapped_bytes_limit_ == 0) {
    std::size_t free = 0;
    std::size_t total = 0;
    cudaMemGetInfo(&free, &total);
    mapped_bytes_limit_ = total > 0 ? total / 4 : SIZE_MAX;
  }
  const std::size_t bytes = allocation_bytes(base);
  mappings_.push_back({owner_pid, buffer.buffer_id, buffer.allocation_address, bytes, base, ++clock_});
  mapped_bytes_ += bytes;
}

// The owner made a new allocation at an address inside one this process maps: that one was freed,
// and only this mapping still keeps its memory allocated (and the driver would refuse to map the new
// one over it). No call in progress uses it: the owner's live allocations do not overlap.
template <typename Doomed> std::size_t IpcHandleCache::close_where_locked(Doomed doomed) {
  const auto closed = std::erase_if(mappings_, [&](const Mapping& mapping) {
    if (!doomed(mapping)) {
      return false;
    }
    cudaIpcCloseMemHandle(mapping.base);
    mapped_bytes_ -= mapping.bytes;
    return true;
  });
  stats_.evictions += closed;
  return closed;
}

void IpcHandleCache::close_replaced_locked(int owner_pid, const PublishedBuffer& buffer) {
  close_where_locked([&](const Mapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.buffer_id != buffer.buffer_id &&
           buffer.allocation_address >= mapping.owner_address &&
           buffer.allocation_address < mapping.owner_address + std::max<std::size_t>(mapping.bytes, 1);
  });
}

void IpcHandleCache::evict_locked(std::size_t count_limit, std::uint64_t epoch) {
  while (mappings_.size() > count_limit || mapped_bytes_ > mapped_bytes_limit_) {
    const auto victim = least_recent(mappings_);
    if (victim == mappings_.end() || victim->last_use > epoch) {
      return; // what is left, the call in progress uses
    }
    const int owner = victim->owner_pid;
    const std::uint64_t id = victim->buffer_id;
    close_where_locked(
        [&](const Mapping& mapping) { return mapping.owner_pid == owner && mapping.buffer_id == id; });
  }
}

std::uint64_t IpcHandleCache::call_epoch() const {
  std::lock_guard lock(mutex_);
  return clock_;
}

bool IpcHandleCache::mapped_locked(int owner_pid, std::uint64_t buffer_id) const {
  return std::ranges::any_of(mappings_, [&](const Mapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.buffer_id == buffer_id;
  });
}

bool IpcHandleCache::in_flight_locked(int owner_pid, std::uint64_t buffer_id) const {
  return std::ranges::any_of(requests_, [&](const Request& request) {
    return request.owner_pid == owner_pid && request.buffer.buffer_id == buffer_id;
  });
}

IpcHandleCache::Readiness IpcHandleCache::readiness(int owner_pid, const PublishedBuffer& buffer) const {
  std::lock_guard lock(mutex_);
  if (mapped_locked(owner_pid, buffer.buffer_id)) {
    return Readiness::Mapped;
  }
  if (in_flight_locked(owner_pid, buffer.buffer_id)) {
    return Readiness::Opening;
  }
  return std::ranges::find(refused_, std::pair{owner_pid, buffer.buffer_id}) != refused_.end()
             ? Readiness::RefusedInBackground
             : Readiness::Unmapped;
}

std::uint64_t IpcHandleCache::mean_open_ns(std::uint64_t fallback) const {
  std::lock_guard lock(mutex_);
  return stats_.misses == 0 ? fallback : stats_.open_ns / stats_.misses;
}

void IpcHandleCache::open_later(int owner_pid, const PublishedBuffer& buffer, int device) {
  std::lock_guard lock(mutex_);
  if (stopping_ || mapped_locked(owner_pid, buffer.buffer_id) ||
      in_flight_locked(owner_pid, buffer.buffer_id) ||
      std::ranges::find(refused_, std::pair{owner_pid, buffer.buffer_id}) != refused_.end() ||
      mappings_.size() + requests_.size() >= capacity_ ||
      (mapped_bytes_limit_ != 0 && mapped_bytes_ >= mapped_bytes_limit_)) {
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
  for (Mapping& mapping : mappings_) {
    if (mapping.owner_pid == owner_pid && mapping.buffer_id == buffer.buffer_id) {
      mapping.last_use = ++clock_;
      ++stats_.hits;
      return static_cast<char*>(mapping.base) + buffer.offset;
    }
  }
  close_replaced_locked(owner_pid, buffer);
  evict_locked(capacity_ - 1, epoch);
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, buffer.handle, sizeof handle);
  void* base = nullptr;
  const auto start = std::chrono::steady_clock::now();
  cudaError_t result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (result != cudaSuccess && close_owner_mappings(owner_pid, epoch)) {
    result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  }
  stats_.open_ns += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  ++stats_.misses;
  if (result != cudaSuccess) {
    *error = static_cast<int>(result);
    return nullptr;
  }
  *opened = true;
  std::erase(refused_, std::pair{owner_pid, buffer.buffer_id});
  insert_locked(owner_pid, buffer, base);
  evict_locked(capacity_, epoch); // by bytes, now that this allocation's size is known
  return static_cast<char*>(base) + buffer.offset;
}

// The owner freed allocations this process still maps and made a new one over their addresses:
// the driver refuses to map it (CUDA_ERROR_ALREADY_MAPPED) while an old mapping overlaps, and the
// old mappings also keep the freed memory alive. Which old allocation overlaps is known only when
// the new one starts inside it (close_replaced_locked); otherwise every mapping of that owner the
// call in progress does not use is closed, and they reopen on next use. True when any was.
bool IpcHandleCache::close_owner_mappings(int owner_pid, std::uint64_t epoch) {
  // Not another owner's, nor one the call in progress uses.
  return close_where_locked([&](const Mapping& mapping) {
           return mapping.owner_pid == owner_pid && mapping.last_use <= epoch;
         }) > 0;
}

bool IpcHandleCache::export_handle(void* base, std::uint64_t buffer_id, PublishedBuffer* buffer, int* error) {
  std::lock_guard lock(mutex_);
  buffer->buffer_id = buffer_id;
  buffer->allocation_address = reinterpret_cast<std::uint64_t>(base);
  for (Export& exported : exports_) {
    if (exported.buffer_id == buffer_id) {
      exported.last_use = ++clock_;
      std::memcpy(buffer->handle, exported.handle, kHandleBytes);
      return true;
    }
  }
  cudaIpcMemHandle_t handle;
  if (const cudaError_t result = cudaIpcGetMemHandle(&handle, base); result != cudaSuccess) {
    *error = static_cast<int>(result);
    return false;
  }
  if (exports_.size() >= capacity_) {
    exports_.erase(least_recent(exports_)); // nothing to release: a handle is plain bytes
  }
  Export exported{buffer_id, {}, ++clock_};
  std::memcpy(exported.handle, &handle, kHandleBytes);
  exports_.push_back(exported);
  std::memcpy(buffer->handle, &handle, kHandleBytes);
  return true;
}

void IpcHandleCache::close_all() {
  stop_worker(); // its last open lands in mappings_ before they are closed
  std::lock_guard lock(mutex_);
  for (const Mapping& mapping : mappings_) {
    cudaIpcCloseMemHandle(mapping.base);
  }
  mappings_.clear();
  mapped_bytes_ = 0;
  exports_.clear();
}

IpcCacheStats IpcHandleCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

} // namespace commlens::runtime
