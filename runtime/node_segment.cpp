#include "node_segment.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>

namespace commlens::runtime {

namespace {

constexpr int kNameLength = 64;

void* map_segment(const char* name, std::size_t bytes, bool create) {
  const int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) {
    return nullptr;
  }
  if (create && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return nullptr;
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return memory == MAP_FAILED ? nullptr : memory;
}

} // namespace

void* map_node_shared_memory(MPI_Comm comm, int rank, std::size_t bytes) {
  static std::atomic<int> segments_made{0};
  char name[kNameLength] = {};
  void* memory = nullptr;
  if (rank == 0) {
    std::snprintf(name, sizeof name, "/commlens-rt-%d-%d", static_cast<int>(getpid()), segments_made++);
    memory = map_segment(name, bytes, true);
    if (memory != nullptr) {
      std::memset(memory, 0, bytes); // ftruncate zeroes too; this keeps the atomics' start explicit
    } else {
      name[0] = '\0';
    }
  }
  PMPI_Bcast(name, kNameLength, MPI_CHAR, 0, comm);
  if (rank != 0 && name[0] != '\0') {
    memory = map_segment(name, bytes, false);
  }
  int mapped = memory != nullptr ? 1 : 0;
  int everyone = 0;
  PMPI_Allreduce(&mapped, &everyone, 1, MPI_INT, MPI_MIN, comm);
  if (rank == 0 && name[0] != '\0') {
    shm_unlink(name);
  }
  if (everyone == 0 && memory != nullptr) {
    munmap(memory, bytes);
    memory = nullptr;
  }
  return memory;
}

bool NodeSegment::open(MPI_Comm comm, int rank, int size, std::string* error) {
  rank_ = rank;
  size_ = size;
  bytes_ = sizeof(RankSlot) * static_cast<std::size_t>(size);
  slots_ = static_cast<RankSlot*>(map_node_shared_memory(comm, rank, bytes_));
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

void NodeSegment::barrier(std::uint64_t number) noexcept {
  slots_[rank_].arrived.store(number, std::memory_order_release);
  for (int peer = 0; peer < size_; ++peer) {
    // Spin briefly, then yield: ranks may outnumber cores (several ranks sharing one GPU).
    for (int spins = 0; slots_[peer].arrived.load(std::memory_order_acquire) < number; ++spins) {
      if (spins > 1000) {
        sched_yield();
      }
    }
  }
}

} // namespace commlens::runtime
