#pragma once
// A file descriptor with positioned reads and writes that fail loudly (SqliteError naming the
// file), and copies between files in the kernel: what the bulk loader (sqlite_bulk_table.hpp) and
// its leaf sequence (sqlite_leaf_sequence.hpp) write SQLite files with.
#include <cstdint>
#include <span>
#include <string>

namespace commlens::sqlite_file {

// Throws SqliteError "path: bulk load: what: strerror(errno)".
[[noreturn]] void fail(const std::string& path, const std::string& what);

class File {
public:
  File(const std::string& path, int flags);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  void read_at(std::span<std::uint8_t> bytes, std::uint64_t offset) const;
  void write_at(std::span<const std::uint8_t> bytes, std::uint64_t offset) const;
  std::uint64_t size() const;

private:
  std::string path_;
  int fd_;
};

// Copies bytes between the files in the kernel where it can (no pass through this process).
void copy_range(int from, std::uint64_t from_offset, const File& to, std::uint64_t to_offset,
                std::uint64_t bytes);

} // namespace commlens::sqlite_file
