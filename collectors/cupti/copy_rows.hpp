#pragma once
// The rows both sources of copies store alike, CUPTI's records (activity_collector.cpp) and the
// runtime's calls (runtime_copies.cpp): cuda_copies, and the ipc_events their IPC tracker gathered.
#include "copy_path_classifier.hpp"
#include "ipc_tracker.hpp"

#include "commlens/profiler/profiler.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace commlens::cuda {

inline constexpr std::string_view kInsertCopySql =
    "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, "
    "bytes, stream, copy_kind, path, link, mpi_call_id, correlation_id, runtime_correlation_id, gpu_timed, "
    "copies) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

// start_ns and end_ns already relative to MPI_Init; call_id 0: made outside MPI and NCCL calls;
// gpu_timed: the times are the copy's on the GPU, not its call's on the host.
std::vector<SqlValue> copy_row(const CudaCopy& copy, const CopyClassification& classified,
                               std::int64_t start_ns, std::int64_t end_ns, std::uint64_t call_id,
                               bool gpu_timed);

// Stores the IPC events gathered since the last call.
void store_ipc_events(IpcTracker& tracker);

} // namespace commlens::cuda
