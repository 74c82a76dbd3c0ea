#pragma once
// The leaf pages a bulk load (sqlite_bulk_table.hpp) puts into a file, numbered 0, 1, ... in the
// order they were added: pages the loader filled, spilled to a file of its own, and runs of pages
// another file holds whole (the leaves a rank encoded at MPI_Finalize, trace_pages.hpp), which are
// copied from there into the database file with no pass through this process. The spill file can
// also be kept under a name of its own (save_as): that is how a rank's leaves are stored.
#include "sqlite_file.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace commlens {

class LeafSequence {
public:
  LeafSequence(std::string spill_path, std::size_t page_size);
  ~LeafSequence();
  LeafSequence(const LeafSequence&) = delete;
  LeafSequence& operator=(const LeafSequence&) = delete;

  // Adds a page (page size bytes) to the spill file; returns its number.
  std::uint32_t add(std::span<const std::uint8_t> page);
  // Adds `pages` pages that `path` holds from its first byte; returns the first one's number.
  std::uint32_t add_file(const std::string& path, std::uint64_t pages);
  std::uint64_t size() const noexcept { return pages_; }

  // Where rollback() returns to.
  struct Mark {
    std::uint64_t pages;
    std::uint64_t spilled; // pages in the spill file and its buffer
    std::size_t runs;
    std::uint64_t last_run_pages;
  };
  Mark mark() const;
  void rollback(const Mark& mark);

  // Writes the spilled pages out, syncs them to disk and renames the spill file to `path` (a
  // sequence of spilled pages only). The sequence is done with afterwards.
  void save_as(const std::string& path);
  // Copies page n of the sequence to page `page_numbers[n]` of `file` (1-based, SQLite's).
  void copy_to(const sqlite_file::File& file, std::span<const std::uint32_t> page_numbers);

private:
  struct Run {
    std::string path;    // empty: the spill file
    std::uint64_t first; // the run's first page in that file
    std::uint64_t pages;
  };
  void flush();

  std::string spill_path_;
  std::size_t page_size_;
  int spill_fd_ = -1;
  std::uint64_t spill_written_ = 0; // pages written to spill_fd_
  std::vector<std::uint8_t> buffer_;
  std::vector<Run> runs_;
  std::uint64_t pages_ = 0;
};

} // namespace commlens
