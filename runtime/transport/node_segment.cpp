#include "transport/node_segment.hpp"
#include "transport/call_phases.hpp"

#include <sched.h>
#include <sys/mman.h>

namespace commlens::runtime {

bool NodeSegment::open(MPI_Comm comm, int rank, int size, std::string* error) {
  rank_ = rank;
  size_ = size;
  bytes_ = sizeof(RankSlot) * static_cast<std::size_t>(size);
  slots_ = static_cast<RankSlot*>(contract::map_node_shared_memory(comm, rank, bytes_));
  if (slots_ == nullptr) {
    *error = "node shared-memory segment could not be created or mapped (shm_open/mmap failed)";
    return false;
  }
  return true;
}

NodeSegment::~NodeSegment() {
  if (slots_ != nullptr) {
    munmap(slots_, bytes_);
  }
}

void pause_spinning(int spins) noexcept {
  if (spins > 1000) {
    sched_yield();
  }
}

void NodeSegment::barrier(std::uint64_t number) noexcept {
  const PhaseTimer waiting(this_thread_phases.barrier_ns);
  slots_[rank_].arrived.store(number, std::memory_order_release);
  for (int peer = 0; peer < size_; ++peer) {
    for (int spins = 0; slots_[peer].arrived.load(std::memory_order_acquire) < number; ++spins) {
      pause_spinning(spins);
    }
  }
}

} // namespace commlens::runtime
