#include "ipc_tracker.hpp"

#include "plugin_context.hpp"

#include <cstdio>

namespace commlens::cuda {

namespace {

// FNV-1a of the handle's bytes, as hex: equal for every open of one exported allocation.
std::string handle_key(const void* handle) {
  std::uint64_t hash = 1469598103934665603ull;
  const auto* bytes = static_cast<const unsigned char*>(handle);
  for (std::size_t i = 0; i < kIpcHandleBytes; ++i) {
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

SqlValue optional_int(std::int64_t value, bool present) {
  return present ? SqlValue{value} : SqlValue{};
}

} // namespace

void IpcTracker::add_row(const char* event, const IpcCall& call, std::uint64_t bytes,
                         const std::string& handle, std::int64_t open_number) {
  rows_.push_back({std::int64_t{host().run_rank}, std::string(event), relative_ns(call.start_ns),
                   relative_ns(call.end_ns), optional_int(call.device, call.device >= 0),
                   optional_int(static_cast<std::int64_t>(call.address), call.address != 0),
                   optional_int(static_cast<std::int64_t>(bytes), bytes != 0),
                   handle.empty() ? SqlValue{} : SqlValue{handle}, optional_int(open_number, open_number > 0),
                   optional_int(static_cast<std::int64_t>(call.mpi_call_id), call.mpi_call_id != 0)});
}

void IpcTracker::handle_exported(const IpcCall& call, const void* handle) {
  const std::lock_guard lock(mutex_);
  add_row("get_handle", call, 0, handle_key(handle), 0);
}

void IpcTracker::handle_opened(const IpcCall& call, const void* handle, std::uint64_t bytes) {
  const std::string key = handle_key(handle);
  const std::lock_guard lock(mutex_);
  const std::int64_t open_number = ++opens_by_handle_[key];
  add_row("open", call, bytes, key, open_number);
  if (call.address != 0) {
    mappings_[call.address] = Mapping{call.address + (bytes != 0 ? bytes : 1), bytes, key};
    mapping_count_.store(mappings_.size(), std::memory_order_relaxed);
  }
}

void IpcTracker::handle_closed(const IpcCall& call) {
  const std::lock_guard lock(mutex_);
  const auto mapping = mappings_.find(call.address);
  std::uint64_t bytes = 0;
  std::string key;
  if (mapping != mappings_.end()) {
    bytes = mapping->second.bytes;
    key = mapping->second.handle;
    mappings_.erase(mapping);
    mapping_count_.store(mappings_.size(), std::memory_order_relaxed);
  }
  add_row("close", call, bytes, key, 0);
}

bool IpcTracker::is_mapped(std::uint64_t address) const {
  const std::lock_guard lock(mutex_);
  auto after = mappings_.upper_bound(address);
  if (after == mappings_.begin()) {
    return false;
  }
  --after;
  return address < after->second.end;
}

std::vector<std::vector<SqlValue>> IpcTracker::take_rows() {
  const std::lock_guard lock(mutex_);
  return std::exchange(rows_, {});
}

} // namespace commlens::cuda
