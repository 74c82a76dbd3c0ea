#include "file_transfer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

namespace commlens::pmpi {

namespace {

constexpr int kChunkTag = 0x4D01;
constexpr int kAbortTag = 0x4D02;

std::string system_error(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// A file descriptor closed on scope exit.
class Descriptor {
public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

bool read_fully(int fd, std::uint8_t* bytes, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got <= 0) {
      return false;
    }
    bytes += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

bool write_fully(int fd, const std::uint8_t* bytes, std::size_t size) {
  while (size > 0) {
    const ssize_t wrote = ::write(fd, bytes, size);
    if (wrote <= 0) {
      return false;
    }
    bytes += wrote;
    size -= static_cast<std::size_t>(wrote);
  }
  return true;
}

std::size_t chunk_at(std::uint64_t size, std::uint64_t offset) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(kTransferChunkBytes, size - offset));
}

// Calls `done` until it says so, sleeping between calls: 50 us at first, doubling up to 5 ms.
template <typename Test> void wait_sleeping(Test&& done) {
  long pause_ns = 50'000;
  while (!done()) {
    const timespec pause{0, pause_ns};
    nanosleep(&pause, nullptr);
    pause_ns = std::min(2 * pause_ns, 5'000'000L);
  }
}

} // namespace

void wait_for_message(MPI_Comm comm, int sender, int tag) {
  wait_sleeping([&] {
    int arrived = 0;
    PMPI_Iprobe(sender, tag, comm, &arrived, MPI_STATUS_IGNORE);
    return arrived != 0;
  });
}

void wait_without_spinning(MPI_Request& request) {
  wait_sleeping([&] {
    int done = 0;
    PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

void send_bytes(MPI_Comm comm, int receiver, int tag, const std::vector<std::uint8_t>& bytes) {
  PMPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, receiver, tag, comm);
}

std::vector<std::uint8_t> receive_bytes(MPI_Comm comm, int sender, int tag) {
  wait_for_message(comm, sender, tag);
  MPI_Status status;
  PMPI_Probe(sender, tag, comm, &status);
  int size = 0;
  PMPI_Get_count(&status, MPI_BYTE, &size);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  PMPI_Recv(bytes.data(), size, MPI_BYTE, sender, tag, comm, MPI_STATUS_IGNORE);
  return bytes;
}

bool send_files(MPI_Comm comm, int receiver, const std::vector<std::string>& paths,
                const std::vector<std::uint64_t>& sizes, std::string& why) {
  std::vector<std::uint8_t> chunk(kTransferChunkBytes);
  for (std::size_t file = 0; file < paths.size(); ++file) {
    const Descriptor fd(::open(paths[file].c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      why = system_error(paths[file], "open");
    }
    for (std::uint64_t offset = 0; why.empty() && offset < sizes[file];) {
      const std::size_t size = chunk_at(sizes[file], offset);
      if (!read_fully(fd.get(), chunk.data(), size, offset)) {
        why = system_error(paths[file], "read");
        break;
      }
      PMPI_Send(chunk.data(), static_cast<int>(size), MPI_BYTE, receiver, kChunkTag, comm);
      offset += size;
    }
    if (!why.empty()) {
      PMPI_Send(nullptr, 0, MPI_BYTE, receiver, kAbortTag, comm);
      return false;
    }
  }
  return true;
}

bool receive_files(MPI_Comm comm, int sender, const std::vector<std::string>& paths,
                   const std::vector<std::uint64_t>& sizes, std::string& why) {
  std::vector<std::uint8_t> chunk(kTransferChunkBytes);
  bool aborted = false;
  for (std::size_t file = 0; file < paths.size() && !aborted; ++file) {
    const Descriptor fd(::open(paths[file].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0 && why.empty()) {
      why = system_error(paths[file], "open");
    }
    for (std::uint64_t offset = 0; offset < sizes[file];) {
      MPI_Status status;
      PMPI_Probe(sender, MPI_ANY_TAG, comm, &status);
      if (status.MPI_TAG == kAbortTag) {
        PMPI_Recv(nullptr, 0, MPI_BYTE, sender, kAbortTag, comm, MPI_STATUS_IGNORE);
        why = why.empty() ? "the sender could not read its files" : why;
        aborted = true;
        break;
      }
      const std::size_t size = chunk_at(sizes[file], offset);
      PMPI_Recv(chunk.data(), static_cast<int>(size), MPI_BYTE, sender, kChunkTag, comm, MPI_STATUS_IGNORE);
      if (why.empty() && !write_fully(fd.get(), chunk.data(), size)) {
        why = system_error(paths[file], "write");
      }
      offset += size;
    }
  }
  if (!why.empty()) {
    for (const std::string& path : paths) {
      std::remove(path.c_str());
    }
  }
  return why.empty();
}

} // namespace commlens::pmpi
