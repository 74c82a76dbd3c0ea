#pragma once
// What an NCCL call carries beyond the record every call gets (mpi_calls / call_stats): the
// datatype, the reduction op, the CUDA stream, root and peer as ranks of the NCCL communicator and
// the group nesting. They go to side tables keyed by the call id (`nccl_calls`, trace mode) and by
// the summary key plus these fields (`nccl_call_stats`, both modes), so the event record and the
// MPI tables keep their size.
//
// Each thread buffers its own rows (a lock of its own, uncontended but for the final flush); trace
// rows go to the writer every kRowsPerBatch calls, the statistics when the collector finishes.
#include "call_recording.hpp"

#include <cstdint>

namespace commlens::nccl {

struct NcclCallDetails {
  static constexpr int kNone = -1;
  static constexpr std::int64_t kNoStream = -1;
  int datatype = kNone;            // ncclDataType_t
  int op = kNone;                  // ncclRedOp_t
  std::int64_t stream = kNoStream; // the cudaStream_t's value; 0 is the legacy default stream
  int root = kNone;                // NCCL rank
  int peer = kNone;                // NCCL rank
  int group_depth = 0;             // ncclGroupStart nesting of the calling thread
};

inline std::int64_t stream_handle(const void* stream) noexcept {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(stream));
}

// After call.record(): keeps the details of a call that was recorded.
void store_call_details(pmpi::CallRecording& call, const NcclCallDetails& details) noexcept;
// Hands every thread's buffered rows and statistics to the profiler's writer (collector finish).
void flush_call_details(Profiler& profiler);

} // namespace commlens::nccl
