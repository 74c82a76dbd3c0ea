#include "sqlite_file.hpp"

#include "commlens/profiler/sqlite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commlens::sqlite_file {

namespace {
constexpr std::size_t kCopyBufferBytes = std::size_t{8} << 20;
} // namespace

void fail(const std::string& path, const std::string& what) {
  throw SqliteError(fmt::format("{}: bulk load: {}: {}", path, what, std::strerror(errno)));
}

File::File(const std::string& path, int flags)
    : path_(path), fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
  if (fd_ < 0) {
    fail(path, "open");
  }
}

File::~File() {
  ::close(fd_);
}

void File::read_at(std::span<std::uint8_t> bytes, std::uint64_t offset) const {
  if (::pread(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset)) !=
      static_cast<ssize_t>(bytes.size())) {
    fail(path_, "short read");
  }
}

void File::write_at(std::span<const std::uint8_t> bytes, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (wrote <= 0) {
      fail(path_, "write");
    }
    done += static_cast<std::size_t>(wrote);
  }
}

std::uint64_t File::size() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    fail(path_, "stat");
  }
  return static_cast<std::uint64_t>(info.st_size);
}

void copy_range(int from, std::uint64_t from_offset, const File& to, std::uint64_t to_offset,
                std::uint64_t bytes) {
  while (bytes > 0) {
    auto in = static_cast<off64_t>(from_offset);
    auto out = static_cast<off64_t>(to_offset);
    ssize_t copied = ::copy_file_range(from, &in, to.fd(), &out, bytes, 0);
    if (copied < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      std::vector<std::uint8_t> buffer(std::min<std::uint64_t>(bytes, kCopyBufferBytes));
      copied = ::pread(from, buffer.data(), buffer.size(), static_cast<off_t>(from_offset));
      if (copied > 0) {
        to.write_at({buffer.data(), static_cast<std::size_t>(copied)}, to_offset);
      }
    }
    if (copied <= 0) {
      throw SqliteError(fmt::format("bulk load: copying pages: {}", std::strerror(errno)));
    }
    from_offset += static_cast<std::uint64_t>(copied);
    to_offset += static_cast<std::uint64_t>(copied);
    bytes -= static_cast<std::uint64_t>(copied);
  }
}

} // namespace commlens::sqlite_file
