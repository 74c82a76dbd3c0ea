#include "correlation_table.hpp"

#include <algorithm>

namespace commlens::cuda {

void CorrelationTable::add(ExternalKind kind, std::uint32_t correlation_id, std::uint64_t external_id) {
  newest_id_ = std::max(newest_id_, correlation_id);
  if (newest_id_ > kKeptIdSpan && mpi_calls_.size() + ipc_copies_.size() > kKeptIdSpan) {
    drop_old_links();
  }
  if (kind == ExternalKind::MpiCall) {
    mpi_calls_[correlation_id] = external_id;
  } else if (kind == ExternalKind::IpcCopy) {
    ipc_copies_.insert(correlation_id);
  }
}

bool CorrelationTable::knows(std::uint32_t correlation_id) const {
  return mpi_calls_.contains(correlation_id) || ipc_copies_.contains(correlation_id);
}

std::uint64_t CorrelationTable::mpi_call(std::uint32_t correlation_id) const {
  const auto found = mpi_calls_.find(correlation_id);
  return found != mpi_calls_.end() ? found->second : 0;
}

bool CorrelationTable::is_ipc_copy(std::uint32_t correlation_id) const {
  return ipc_copies_.contains(correlation_id);
}

void CorrelationTable::drop_old_links() {
  const std::uint32_t oldest_kept = newest_id_ - kKeptIdSpan;
  std::erase_if(mpi_calls_, [oldest_kept](const auto& link) { return link.first < oldest_kept; });
  std::erase_if(ipc_copies_, [oldest_kept](std::uint32_t id) { return id < oldest_kept; });
}

} // namespace commlens::cuda
