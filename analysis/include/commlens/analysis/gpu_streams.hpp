#pragma once
// The GPU side of the timeline, per CUDA stream: what ran on each stream of each rank's GPU.
// Kernels, copies and memsets carry CUPTI's stream id. NCCL calls carry the cudaStream_t the
// program passed (nccl_calls.stream) and their GPU span from CUDA events on it (device_spans,
// recorded by default; kernels only when COMMLENS_KERNELS asks). Where kernels were recorded, a
// stream handle is matched to CUPTI's id through the NCCL kernels its calls launched (tied by
// mpi_call_id, or lying inside one of its spans), so a lane holds both; otherwise the handle has a
// lane of its own. Synchronisations (recorded with kernels) are the host's waits on the GPU; the
// host's CUDA API calls are in cuda_api_calls.hpp.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commlens::analysis {

struct GpuStream {
  int rank = 0;
  // Empty for a stream known only from NCCL spans on a rank whose work ran on several GPUs.
  std::optional<int> device;
  std::optional<std::int64_t> stream;      // CUPTI's stream id; empty when known only from NCCL spans
  std::optional<std::int64_t> nccl_stream; // the cudaStream_t its NCCL calls named, when they did
  bool spans_without_stream = false;       // holds the device spans of calls without an nccl_calls row
  // Over the whole run.
  std::uint64_t compute_kernels = 0;
  std::uint64_t communication_kernels = 0; // kernel_names.hpp's kernel_kind
  std::uint64_t copies = 0;
  std::uint64_t memsets = 0;
  std::uint64_t nccl_spans = 0;
};

// By rank, then device and stream (streams known only from spans last). Empty without CUDA tables.
std::vector<GpuStream> query_gpu_streams(const Database& database);

// The lane (index into `streams`) of a kernel, copy or memset, and of a device span; -1 for none.
int stream_lane(const std::vector<GpuStream>& streams, int rank, int device, std::int64_t stream);
int span_lane(const std::vector<GpuStream>& streams, int rank, std::optional<std::int64_t> nccl_stream);

// One row of cuda_memsets.
struct TimelineMemset {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int device = 0;
  std::int64_t stream = 0;
  std::int64_t bytes = 0;
  std::string memory_kind;
  std::int64_t correlation_id = 0; // CUPTI's: that of the API call that made it
};

// One call's time on the GPU (device_spans): from the CUDA event recorded on its stream before the
// call's work to the one after it.
struct TimelineDeviceSpan {
  std::int64_t call_id = 0;
  int function_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::int64_t> nccl_stream; // empty: the call has no nccl_calls row
};

// One row of cuda_synchronizations: the host waiting for the GPU.
struct TimelineSynchronization {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string kind; // stream_synchronize, event_synchronize, stream_wait_event, context_synchronize
  std::optional<std::int64_t> stream;
};

// Rows of `rank` overlapping [start_ns, end_ns), ascending start; empty where the table is missing.
std::vector<TimelineMemset> query_timeline_memsets(const Database& database, int rank, std::int64_t start_ns,
                                                   std::int64_t end_ns);
std::vector<TimelineDeviceSpan> query_timeline_device_spans(const Database& database, int rank,
                                                            std::int64_t start_ns, std::int64_t end_ns);
std::vector<TimelineSynchronization> query_timeline_synchronizations(const Database& database, int rank,
                                                                     std::int64_t start_ns,
                                                                     std::int64_t end_ns);

} // namespace commlens::analysis
