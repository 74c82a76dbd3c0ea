#pragma once
// CUDA IPC as seen by this process: every handle exported, opened and closed (ipc_events), and the
// address ranges currently mapped from other processes, so that copies touching them are
// classified as ipc. Repeated opens of one handle are numbered: what a handle cache would save.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commlens/profiler/profiler.hpp"

namespace commlens::cuda {

inline constexpr std::size_t kIpcHandleBytes = 64; // cudaIpcMemHandle_t and CUipcMemHandle

struct IpcCall {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  int device = -1;
  std::uint64_t address = 0;
  std::uint64_t mpi_call_id = 0;
};

class IpcTracker {
public:
  void handle_exported(const IpcCall& call, const void* handle);
  void handle_opened(const IpcCall& call, const void* handle, std::uint64_t bytes);
  void handle_closed(const IpcCall& call);

  // Cheap test first: most processes never map anything.
  bool has_mappings() const noexcept { return mapping_count_.load(std::memory_order_relaxed) > 0; }
  bool is_mapped(std::uint64_t address) const;

  // Moves the events gathered so far into rows of ipc_events.
  std::vector<std::vector<SqlValue>> take_rows();

private:
  void add_row(const char* event, const IpcCall& call, std::uint64_t bytes, const std::string& handle,
               std::int64_t open_number);

  struct Mapping {
    std::uint64_t end;
    std::uint64_t bytes;
    std::string handle;
  };
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Mapping> mappings_; // by start address
  std::unordered_map<std::string, std::int64_t> opens_by_handle_;
  std::vector<std::vector<SqlValue>> rows_;
  std::atomic<std::size_t> mapping_count_{0};
};

} // namespace commlens::cuda
