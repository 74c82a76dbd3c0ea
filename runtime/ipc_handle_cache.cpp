#include "ipc_handle_cache.hpp"

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

} // namespace

void* IpcHandleCache::map(int owner_pid, const PublishedBuffer& buffer, bool* opened, int* error) {
  std::lock_guard lock(mutex_);
  *opened = false;
  for (Mapping& mapping : mappings_) {
    if (mapping.owner_pid == owner_pid && mapping.buffer_id == buffer.buffer_id) {
      mapping.last_use = ++clock_;
      ++stats_.hits;
      return static_cast<char*>(mapping.base) + buffer.offset;
    }
  }
  if (mappings_.size() >= capacity_) {
    const auto victim = least_recent(mappings_);
    cudaIpcCloseMemHandle(victim->base);
    mappings_.erase(victim);
    ++stats_.evictions;
  }
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, buffer.handle, sizeof handle);
  void* base = nullptr;
  const auto start = std::chrono::steady_clock::now();
  cudaError_t result = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (result != cudaSuccess && close_owner_mappings(owner_pid)) {
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
  mappings_.push_back({owner_pid, buffer.buffer_id, base, ++clock_});
  return static_cast<char*>(base) + buffer.offset;
}

// The owner freed allocations this process still maps and made a new one over their addresses:
// the driver refuses to map it (CUDA_ERROR_ALREADY_MAPPED) while an old mapping overlaps, and the
// old mappings also keep the freed memory alive. Which old allocation overlaps is unknown (their
// sizes are not published), so every mapping of that owner is closed; they reopen on next use.
// True when any was.
bool IpcHandleCache::close_owner_mappings(int owner_pid) {
  const auto closed = std::erase_if(mappings_, [owner_pid](const Mapping& mapping) {
    if (mapping.owner_pid != owner_pid) {
      return false;
    }
    cudaIpcCloseMemHandle(mapping.base);
    return true;
  });
  stats_.evictions += closed;
  return closed > 0;
}

bool IpcHandleCache::export_handle(void* base, std::uint64_t buffer_id, PublishedBuffer* buffer, int* error) {
  std::lock_guard lock(mutex_);
  buffer->buffer_id = buffer_id;
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
  std::lock_guard lock(mutex_);
  for (const Mapping& mapping : mappings_) {
    cudaIpcCloseMemHandle(mapping.base);
  }
  mappings_.clear();
  exports_.clear();
}

IpcCacheStats IpcHandleCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

} // namespace commlens::runtime
