#pragma once
// Which CUDA IPC mappings of other processes' allocations a process keeps open, and which it must
// close: the policy of IpcHandleCache (ipc_handle_cache.hpp) without the CUDA calls, so that it is
// tested on the host. A mapping keeps its allocation allocated even after the owner frees it, so:
// - a mapping is closed as soon as its owner publishes a new allocation at an address inside it
//   (allocators reuse addresses; the old allocation is gone, and the driver would refuse to map
//   the new one over it);
// - the mappings are bounded in count and in bytes, least recently used closed first;
// - a mapping used since a call's epoch is never closed by that call (its kernels may read
//   through it).
// Every function that closes returns the local bases to close, removed from the table already.
#include "transport/node_segment.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commlens::runtime {

struct PeerMapping {
  int owner_pid;
  std::uint64_t buffer_id;     // CU_POINTER_ATTRIBUTE_BUFFER_ID in the owner
  std::uint64_t owner_address; // the allocation's base in its owner
  std::size_t bytes;           // the allocation's size: what the mapping keeps allocated
  void* base;                  // where it is mapped in this process
  std::uint64_t last_use;
};

class MappingTable {
public:
  explicit MappingTable(std::size_t count_limit) : count_limit_(count_limit) {}

  // The byte bound, known once a GPU's memory size is (until then: none).
  void set_byte_limit(std::size_t bytes) noexcept { byte_limit_ = bytes; }
  bool byte_limit_known() const noexcept { return byte_limit_ != kNoLimit; }
  // A mark taken before a call's first use(): mappings used or added after it have a later use.
  std::uint64_t epoch() const noexcept { return clock_; }

  // The local base of (owner, buffer id), marked used now; null when not mapped.
  void* use(int owner_pid, std::uint64_t buffer_id) noexcept;
  bool contains(int owner_pid, std::uint64_t buffer_id) const noexcept;
  // Whether `queued` more mappings fit without closing any (the background opener never closes).
  bool has_room(std::size_t queued) const noexcept;
  void add(int owner_pid, const PublishedBuffer& buffer, void* base, std::size_t bytes);

  // The owner's mappings whose allocation holds the address of `buffer`'s allocation, a different
  // one: freed and replaced.
  std::vector<void*> close_replaced(int owner_pid, const PublishedBuffer& buffer);
  // Least recently used mappings not used since `epoch`, until at most `count` are left and the
  // bytes are within the bound, or none is left to close.
  std::vector<void*> evict(std::size_t count, std::uint64_t epoch);
  // Every mapping of the owner not used since `epoch` (the driver refused a new one: some old one
  // overlaps it, which one is unknown).
  std::vector<void*> close_owner(int owner_pid, std::uint64_t epoch);
  // The mapping of the owner's allocation with this buffer id (the owner freed it).
  std::vector<void*> close_buffer(int owner_pid, std::uint64_t buffer_id);
  std::vector<void*> close_all();

  std::size_t count_limit() const noexcept { return count_limit_; }
  std::size_t size() const noexcept { return mappings_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t peak_bytes() const noexcept { return peak_bytes_; } // the most ever mapped at once
  std::uint64_t closed() const noexcept { return closed_; }       // all but close_all's

private:
  static constexpr std::size_t kNoLimit = static_cast<std::size_t>(-1);
  template <typename Doomed> std::vector<void*> close_where(Doomed doomed);

  std::size_t count_limit_;
  std::size_t byte_limit_ = kNoLimit;
  std::uint64_t clock_ = 0;
  std::vector<PeerMapping> mappings_;
  std::size_t bytes_ = 0;
  std::size_t peak_bytes_ = 0;
  std::uint64_t closed_ = 0;
};

} // namespace commlens::runtime
