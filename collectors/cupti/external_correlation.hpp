#pragma once
// External correlation: the MPI call id pushed on wrapper entry (kind CUSTOM0) and the ipc-copy
// marker pushed by the memcpy callback (kind CUSTOM1). CUPTI reports, per CUDA API call made while
// one is pushed, a record linking the API's correlation id to it; CorrelationTable keeps those
// links for the copies and kernels that arrive in the same or a later buffer.
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

namespace commlens::cuda {

void push_mpi_call(std::uint64_t call_id) noexcept;
void pop_mpi_call() noexcept;
bool push_ipc_copy_marker() noexcept;
void pop_ipc_copy_marker() noexcept;

enum class ExternalKind : std::uint8_t { MpiCall, IpcCopy, Other };

class CorrelationTable {
public:
  void add(ExternalKind kind, std::uint32_t correlation_id, std::uint64_t external_id);
  bool knows(std::uint32_t correlation_id) const;
  // 0 when the API call was made outside any MPI call.
  std::uint64_t mpi_call(std::uint32_t correlation_id) const;
  bool is_ipc_copy(std::uint32_t correlation_id) const;

private:
  // Links of API calls that launched nothing (cudaMalloc, the driver calls of a CUDA-aware MPI)
  // would pile up: correlation ids grow, so links far behind the newest are dropped.
  static constexpr std::uint32_t kKeptIdSpan = 1u << 20;
  void drop_old_links();
  std::uint32_t newest_id_ = 0;

  std::unordered_map<std::uint32_t, std::uint64_t> mpi_calls_;
  std::unordered_set<std::uint32_t> ipc_copies_;
};

} // namespace commlens::cuda
