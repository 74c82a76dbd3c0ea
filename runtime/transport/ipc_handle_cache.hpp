#pragma once
// CUDA IPC mappings of other processes' allocations, kept open across calls: opening a handle costs
// about 2.3 ms on an H100/H200 node, a cache hit nothing. Keyed by the owner's pid and the
// allocation's buffer id, so an allocation freed and another made at the same address is a new key
// (never a stale mapping). Which mappings to close when (replaced allocations, bounds in count and
// in bytes, a quarter of the GPU's memory) is ipc_mapping_table.hpp's; this class makes the CUDA
// calls. Measured without those rules: 16 calls on fresh 512 MiB buffers with four ranks sharing
// an H100 left 49 GB allocated.
// Also caches this process's own exported handles (cudaIpcGetMemHandle per allocation once).
// Handles can also be opened on a worker thread (open_later), so that a call need not wait for
// them: the Dynamic copy-type selection of "Design considerations for GPU-aware collective communications in
// MPI" (Faraji and Afsahi), the host path serving meanwhile.
#include "transport/ipc_mapping_table.hpp"
#include "transport/node_segment.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace commlens::runtime {

// The reason a call's row gives when a first use took the host path while the worker opened the
// peer's handle (allreduce and point-to-point alike, so one query finds both).
inline constexpr const char* kFirstUseReason =
    "first use of a peer's buffer: the host path while its CUDA IPC handle opens in the background";

struct IpcCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t open_ns = 0;          // time spent in cudaIpcOpenMemHandle, both threads
  std::uint64_t background_opens = 0; // of the misses, those the worker opened
  std::size_t mapped_bytes = 0;       // of peers' allocations kept allocated by mappings, now
  std::size_t peak_mapped_bytes = 0;  // and at most, over the run
};

class IpcHandleCache {
public:
  explicit IpcHandleCache(std::size_t capacity) : capacity_(capacity), table_(capacity) {}
  IpcHandleCache(const IpcHandleCache&) = delete;
  IpcHandleCache& operator=(const IpcHandleCache&) = delete;
  ~IpcHandleCache() { stop_worker(); }

  // A mark taken before a call's first map(): the mappings the call gets after it are in use until
  // the call ends, so its later map()s never close them (eviction, a refused open's retry).
  std::uint64_t call_epoch() const;
  // The local address of the peer's buffer (mapping base + offset); null on failure (*error set
  // to the CUDA error). *opened is true when this call had to open the handle. Waits for the
  // worker when it is opening this very handle.
  void* map(int owner_pid, const PublishedBuffer& buffer, std::uint64_t epoch, bool* opened, int* error);
  // What map() would find: the buffer mapped (no open, no wait), queued for the worker (map()
  // would wait), not mapped, or refused by the worker's open (map() may close the owner's stale
  // mappings and retry; the worker may not). Counts nothing.
  enum class Readiness { Mapped, Opening, Unmapped, RefusedInBackground };
  Readiness readiness(int owner_pid, const PublishedBuffer& buffer) const;
  // Opens the handle on the worker thread (with `device` current), so that a later map() hits.
  // Only while the cache has room: the worker never closes a mapping, because the caller's kernels
  // may be reading through any of them. A handle mapped or queued already is skipped.
  void open_later(int owner_pid, const PublishedBuffer& buffer, int device);
  // Whether opening `unmapped` handles would take longer than `host_path_ns`, the host path's
  // estimate for the same data: this process's mean open time, tuning::kTypicalIpcOpenNs before the
  // first (selection_thresholds.hpp).
  bool opening_costs_more(std::size_t unmapped, std::uint64_t host_path_ns) const;
  // Fills buffer->handle for an allocation of this process (base given), cached per buffer id.
  bool export_handle(void* base, std::uint64_t buffer_id, PublishedBuffer* buffer, int* error);
  // The owner's half of a two-phase free: finds the exported allocations the program freed since
  // (their address no longer holds their buffer id) and fills *freed with the recent ones.
  void publish_freed_exports(FreedExports* freed);
  // The importer's half: closes its mappings of the owner's allocations freed since it last looked
  // (all of the owner's, when more were freed than the ring holds). Before a call maps anything.
  void close_freed(int owner_pid, const FreedExports& freed);
  // Closes every mapping (MPI_Finalize).
  void close_all();
  IpcCacheStats stats() const;

private:
  bool in_flight_locked(int owner_pid, std::uint64_t buffer_id) const;
  Readiness readiness_locked(int owner_pid, const PublishedBuffer& buffer) const;
  void work();
  void stop_worker();
  void insert_locked(int owner_pid, const PublishedBuffer& buffer, void* base);
  // Closes what the table decided to close; whether there was any.
  static bool close(const std::vector<void*>& bases);

  struct Export {
    void* base;
    std::uint64_t buffer_id;
    unsigned char handle[kHandleBytes];
    std::uint64_t last_use; // export_clock_ at its last export
    std::uint64_t checked_sweep =
        0; // publish_freed_exports' sweep that last found it alive; 0: not since its use
  };

  struct Request {
    int owner_pid;
    PublishedBuffer buffer;
    int device;
  };

  mutable std::mutex mutex_;
  std::size_t capacity_;
  MappingTable table_; // its byte bound is set at the first open
  std::vector<Export> exports_;
  FreedExports freed_exports_{};                    // this process's, as publish_freed_exports found them
  std::vector<std::pair<int, std::uint64_t>> seen_; // (owner, generation) close_freed has handled
  std::uint64_t export_clock_ = 0;
  std::uint64_t swept_clock_ = 0; // export_clock_ when publish_freed_exports last returned
  std::uint64_t sweep_ = 0;       // publish_freed_exports' calls
  IpcCacheStats stats_;
  std::deque<Request> requests_; // queued or being opened (the front, while the worker opens it)
  std::vector<std::pair<int, std::uint64_t>> refused_; // (owner, buffer id) the worker could not open
  std::condition_variable work_ready_;
  std::condition_variable opened_; // the worker finished a request
  std::thread worker_;             // started by the first open_later
  bool stopping_ = false;
};

} // namespace commlens::runtime
