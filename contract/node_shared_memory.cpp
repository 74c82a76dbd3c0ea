#include "node_shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace commlens::contract {

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
    // The counter's address tells the core's copy of this function from the plugin's.
    std::snprintf(name, sizeof name, "/commlens-rt-%d-%d-%zx", static_cast<int>(getpid()), segments_made++,
                  reinterpret_cast<std::size_t>(&segments_made) & 0xffffff);
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

} // namespace commlens::contract
