#pragma once
// The links CUPTI's external-correlation records make between a CUDA API call (its correlation id)
// and the MPI or NCCL call that was running around it (the call id its wrapper pushed), and how a
// buffer's copies, kernels, memsets and synchronisations find theirs. No CUDA here: unit-tested
// with synthetic records on any machine.
#include "cuda_records.hpp"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace commlens::cuda {

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

// A copy is linked through its driver API call or the runtime API call around it (external
// correlation records come for both); kernels, memsets and synchronisations through the one API
// call that made them.
inline bool linked(const CorrelationTable& table, const CudaCopy& copy) {
  return table.knows(copy.correlation_id) || table.knows(copy.runtime_correlation_id);
}
template <class Record> bool linked(const CorrelationTable& table, const Record& record) {
  return table.knows(record.correlation_id);
}
// The call id of the MPI or NCCL call that issued the record; 0 outside any.
inline std::uint64_t call_of(const CorrelationTable& table, const CudaCopy& copy) {
  const std::uint64_t by_driver = table.mpi_call(copy.correlation_id);
  return by_driver != 0 ? by_driver : table.mpi_call(copy.runtime_correlation_id);
}
template <class Record> std::uint64_t call_of(const CorrelationTable& table, const Record& record) {
  return table.mpi_call(record.correlation_id);
}

// The records of one buffer to store now: those parked from the previous buffer, and the fresh ones
// whose link has arrived. A fresh record without its link (a synchronous copy or a kernel can
// complete before its API call returns and writes the link) is parked for one more buffer, then
// stored as outside any call. `final` takes everything.
template <class Record>
std::vector<Record> take_ready(std::vector<Record>& fresh, std::vector<Record>& parked,
                               const CorrelationTable& table, bool final) {
  std::vector<Record> ready = std::move(parked);
  parked.clear();
  for (Record& record : fresh) {
    if (final || linked(table, record)) {
      ready.push_back(std::move(record));
    } else {
      parked.push_back(std::move(record));
    }
  }
  fresh.clear();
  return ready;
}

} // namespace commlens::cuda
