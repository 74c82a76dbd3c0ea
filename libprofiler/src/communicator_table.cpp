#include "commlens/profiler/communicator_table.hpp"

namespace commlens {

std::uint32_t CommunicatorTable::add(CommunicatorInfo info) {
  std::lock_guard lock(mutex_);
  entries_.push_back(std::move(info));
  ++version_;
  return static_cast<std::uint32_t>(entries_.size() - 1);
}

void CommunicatorTable::mark_freed(std::uint32_t index, std::uint64_t freed_ns) {
  std::lock_guard lock(mutex_);
  if (index < entries_.size()) {
    entries_[index].freed_ns = freed_ns;
    ++version_;
  }
}

void CommunicatorTable::set_name(std::uint32_t index, std::string name) {
  std::lock_guard lock(mutex_);
  if (index < entries_.size()) {
    entries_[index].name = std::move(name);
    ++version_;
  }
}

std::int64_t CommunicatorTable::id_of(std::uint32_t index) const {
  std::lock_guard lock(mutex_);
  return index < entries_.size() ? entries_[index].id : -1;
}

std::vector<CommunicatorInfo> CommunicatorTable::snapshot(std::size_t first) const {
  std::lock_guard lock(mutex_);
  if (first >= entries_.size()) {
    return {};
  }
  return {entries_.begin() + static_cast<std::ptrdiff_t>(first), entries_.end()};
}

std::uint64_t CommunicatorTable::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

} // namespace commlens
