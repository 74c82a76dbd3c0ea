#pragma once
// Every communicator the process has seen, in creation order. Entries are never reused, so an
// index stored in an event record stays valid until the writer has resolved it. Adding takes a
// mutex: communicator creation is a collective that costs far more than the lock.
#include "commlens/profiler/event_record.hpp"

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace commlens {

struct CommunicatorInfo {
  std::int64_t id = 0;         // equal on every member, job-wide
  std::int64_t parent_id = -1; // -1: none (MPI_COMM_WORLD, MPI_COMM_SELF)
  FunctionId created_by = 0;   // function id of the creating call; 0 for predefined
  std::string name;            // "MPI_COMM_WORLD", "MPI_COMM_SELF", or MPI_Comm_set_name's
  bool is_inter = false;
  int local_rank = 0;              // this process's rank in the (local group of the) communicator
  std::vector<int> members;        // world ranks of the (local) group, by communicator rank
  std::vector<int> remote_members; // world ranks of the remote group (inter-communicators)
  std::uint64_t created_ns = 0;
  std::uint64_t freed_ns = 0; // 0 while alive
};

class CommunicatorTable {
public:
  std::uint32_t add(CommunicatorInfo info);
  void mark_freed(std::uint32_t index, std::uint64_t freed_ns);
  void set_name(std::uint32_t index, std::string name);
  std::int64_t id_of(std::uint32_t index) const;
  // Entries from `first` on, copied under the lock (for the writer), and the change counter that
  // tells the writer whether anything it already stored has changed since.
  std::vector<CommunicatorInfo> snapshot(std::size_t first = 0) const;
  std::uint64_t version() const;

private:
  mutable std::mutex mutex_;
  std::deque<CommunicatorInfo> entries_;
  std::uint64_t version_ = 0;
};

} // namespace commlens
