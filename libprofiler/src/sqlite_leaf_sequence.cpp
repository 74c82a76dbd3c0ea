#include "sqlite_leaf_sequence.hpp"

#include "commlens/profiler/sqlite.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

namespace commlens {

using sqlite_file::fail;
using sqlite_file::File;

namespace {
constexpr std::size_t kSpillBufferBytes = std::size_t{8} << 20;
} // namespace

LeafSequence::LeafSequence(std::string spill_path, std::size_t page_size)
    : spill_path_(std::move(spill_path)), page_size_(page_size) {
  spill_fd_ = ::open(spill_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (spill_fd_ < 0) {
    fail(spill_path_, "open");
  }
  buffer_.reserve(kSpillBufferBytes);
}

LeafSequence::~LeafSequence() {
  if (spill_fd_ >= 0) {
    ::close(spill_fd_);
    std::remove(spill_path_.c_str());
  }
}

std::uint32_t LeafSequence::add(std::span<const std::uint8_t> page) {
  const std::uint64_t spilled = spill_written_ + buffer_.size() / page_size_;
  if (runs_.empty() || !runs_.back().path.empty()) {
    runs_.push_back(Run{"", spilled, 0});
  }
  ++runs_.back().pages;
  buffer_.insert(buffer_.end(), page.begin(), page.end());
  if (buffer_.size() >= kSpillBufferBytes) {
    flush();
  }
  return static_cast<std::uint32_t>(pages_++);
}

std::uint32_t LeafSequence::add_file(const std::string& path, std::uint64_t pages) {
  const auto first = static_cast<std::uint32_t>(pages_);
  if (pages > 0) {
    runs_.push_back(Run{path, 0, pages});
    pages_ += pages;
  }
  return first;
}

void LeafSequence::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t wrote = ::pwrite(spill_fd_, buffer_.data() + done, buffer_.size() - done,
                                   static_cast<off_t>(spill_written_ * page_size_ + done));
    if (wrote <= 0) {
      fail(spill_path_, "write");
    }
    done += static_cast<std::size_t>(wrote);
  }
  spill_written_ += buffer_.size() / page_size_;
  buffer_.clear();
}

LeafSequence::Mark LeafSequence::mark() const {
  return Mark{pages_, spill_written_ + buffer_.size() / page_size_, runs_.size(),
              runs_.empty() ? 0 : runs_.back().pages};
}

void LeafSequence::rollback(const Mark& mark) {
  if (mark.spilled >= spill_written_) {
    buffer_.resize((mark.spilled - spill_written_) * page_size_);
  } else {
    buffer_.clear();
    spill_written_ = mark.spilled;
    if (::ftruncate(spill_fd_, static_cast<off_t>(spill_written_ * page_size_)) != 0) {
      fail(spill_path_, "truncate");
    }
  }
  runs_.resize(mark.runs);
  if (!runs_.empty()) {
    runs_.back().pages = mark.last_run_pages;
  }
  pages_ = mark.pages;
}

void LeafSequence::save_as(const std::string& path) {
  flush();
  if (::fsync(spill_fd_) != 0) {
    fail(spill_path_, "sync");
  }
  if (std::rename(spill_path_.c_str(), path.c_str()) != 0) {
    fail(path, "rename");
  }
  ::close(spill_fd_);
  spill_fd_ = -1;
}

void LeafSequence::copy_to(const File& file, std::span<const std::uint32_t> page_numbers) {
  flush();
  std::uint64_t number = 0; // of the run's first page in the sequence
  for (const Run& run : runs_) {
    std::optional<File> source;
    int from = spill_fd_;
    if (!run.path.empty()) {
      source.emplace(run.path, O_RDONLY);
      if (source->size() < run.pages * page_size_) {
        throw SqliteError(fmt::format("{}: bulk load: fewer pages than recorded", run.path));
      }
      from = source->fd();
    }
    // Pages that go to consecutive page numbers are copied together.
    for (std::uint64_t first = 0; first < run.pages;) {
      std::uint64_t end = first + 1;
      while (end < run.pages && page_numbers[number + end] == page_numbers[number + end - 1] + 1) {
        ++end;
      }
      sqlite_file::copy_range(from, (run.first + first) * page_size_, file,
                              std::uint64_t{page_numbers[number + first] - 1} * page_size_,
                              (end - first) * page_size_);
      first = end;
    }
    number += run.pages;
  }
}

} // namespace commlens
