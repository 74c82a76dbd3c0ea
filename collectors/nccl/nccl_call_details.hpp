#pragma once
// What an NCCL call carries beyond the record every call gets (mpi_calls / call_stats): the
// datatype, the reduction op, the CUDA stream, root and peer as ranks of the NCCL communicator and
// the group nesting (NcclCallDetails). They go to side tables keyed by the call id (`nccl_calls`,
// trace mode) and by the summary key plus these fields (`nccl_call_stats`, both modes), so the
// event record and the MPI tables keep their size.
//
// Each thread buffers its own rows (a lock of its own, uncontended but for the final flush); every
// kRowsPerBatch calls in trace mode they go to the writer as one compact chunk (nccl_call_chunk.hpp,
// decoded into nccl_calls by the merge), the statistics when the collector finishes.
#include "call_recording.hpp"
#include "commlens/profiler/nccl_call_chunk.hpp"

#include <cstdint>

namespace commlens::nccl {

inline std::int64_t stream_handle(const void* stream) noexcept {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(stream));
}

// After call.record(): keeps the details of a call that was recorded.
void store_call_details(pmpi::CallRecording& call, const NcclCallDetails& details) noexcept;
// Hands every thread's buffered rows and statistics to the profiler's writer (collector finish).
void flush_call_details(Profiler& profiler);

} // namespace commlens::nccl
