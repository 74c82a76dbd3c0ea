#include "transport/ipc_mapping_table.hpp"

#include <algorithm>

namespace commlens::runtime {

void* MappingTable::use(int owner_pid, std::uint64_t buffer_id) noexcept {
  for (PeerMapping& mapping : mappings_) {
    if (mapping.owner_pid == owner_pid && mapping.buffer_id == buffer_id) {
      mapping.last_use = ++clock_;
      return mapping.base;
    }
  }
  return nullptr;
}

bool MappingTable::contains(int owner_pid, std::uint64_t buffer_id) const noexcept {
  return std::ranges::any_of(mappings_, [&](const PeerMapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.buffer_id == buffer_id;
  });
}

bool MappingTable::has_room(std::size_t queued) const noexcept {
  return mappings_.size() + queued < count_limit_ && (!byte_limit_known() || bytes_ < byte_limit_);
}

void MappingTable::add(int owner_pid, const PublishedBuffer& buffer, void* base, std::size_t bytes) {
  mappings_.push_back({owner_pid, buffer.buffer_id, buffer.allocation_address, bytes, base, ++clock_});
  bytes_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, bytes_);
}

template <typename Doomed> std::vector<void*> MappingTable::close_where(Doomed doomed) {
  std::vector<void*> closing;
  std::erase_if(mappings_, [&](const PeerMapping& mapping) {
    if (!doomed(mapping)) {
      return false;
    }
    closing.push_back(mapping.base);
    bytes_ -= mapping.bytes;
    return true;
  });
  closed_ += closing.size();
  return closing;
}

// No call in progress uses a replaced mapping: the owner's live allocations do not overlap.
std::vector<void*> MappingTable::close_replaced(int owner_pid, const PublishedBuffer& buffer) {
  return close_where([&](const PeerMapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.buffer_id != buffer.buffer_id &&
           buffer.allocation_address >= mapping.owner_address &&
           buffer.allocation_address < mapping.owner_address + std::max<std::size_t>(mapping.bytes, 1);
  });
}

std::vector<void*> MappingTable::evict(std::size_t count, std::uint64_t epoch) {
  std::vector<void*> closing;
  while (mappings_.size() > count || (byte_limit_known() && bytes_ > byte_limit_)) {
    const auto victim = std::ranges::min_element(
        mappings_, [](const PeerMapping& a, const PeerMapping& b) { return a.last_use < b.last_use; });
    if (victim == mappings_.end() || victim->last_use > epoch) {
      break; // what is left, the call in progress uses
    }
    closing.push_back(victim->base);
    bytes_ -= victim->bytes;
    mappings_.erase(victim);
  }
  closed_ += closing.size();
  return closing;
}

std::vector<void*> MappingTable::close_owner(int owner_pid, std::uint64_t epoch) {
  return close_where([&](const PeerMapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.last_use <= epoch;
  });
}

std::vector<void*> MappingTable::close_buffer(int owner_pid, std::uint64_t buffer_id) {
  return close_where([&](const PeerMapping& mapping) {
    return mapping.owner_pid == owner_pid && mapping.buffer_id == buffer_id;
  });
}

std::vector<void*> MappingTable::close_all() {
  std::vector<void*> closing;
  for (const PeerMapping& mapping : mappings_) {
    closing.push_back(mapping.base);
  }
  mappings_.clear();
  bytes_ = 0;
  return closing;
}

} // namespace commlens::runtime
