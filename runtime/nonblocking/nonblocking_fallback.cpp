#include "nonblocking/nonblocking_fallback.hpp"

#include "collectives/data_movement/data_movement_call.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>

namespace commlens::runtime {

namespace {

// The most runs a datatype may have for a fallback to copy it run by run.
constexpr std::size_t kMaxFallbackRuns = std::size_t{1} << 20;

// The inputs' producers are done: the call's event, or the legacy default stream as it is now.
bool inputs_ready(void* ready_event) {
  if (ready_event == nullptr) {
    return wait_for_legacy_stream();
  }
  if (cudaEventSynchronize(static_cast<cudaEvent_t>(ready_event)) == cudaSuccess) {
    return true;
  }
  cudaGetLastError();
  return false;
}

} // namespace

nonblocking::Outcome run_through_shared_memory(CommunicatorEngine& engine,
                                               const NonblockingCollectives::Lane& lane, std::string reason,
                                               RuntimeOp& row, const SharedMemoryCollective& collective) {
  const bool ready = inputs_ready(lane.ready_event);
  auto* const stream = static_cast<cudaStream_t>(lane.stream);
  const StageContext context{
      .stages = lane.stages,
      .barrier = [&engine] { engine.segment().barrier(engine.next_barrier()); },
      // Any memory to or from the stages (cudaMemcpyDefault: host, device or managed); a failed
      // copy fails the call on every rank instead of leaving the others waiting.
      .copy =
          [ready, stream](void* destination, const void* source, std::size_t bytes) {
            if (ready &&
                cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream) == cudaSuccess &&
                cudaStreamSynchronize(stream) == cudaSuccess) {
              return true;
            }
            cudaGetLastError();
            return false;
          }};
  const SharedMemoryResult result = collective(context);
  if (result.declined) { // the calling thread posts the baseline through MPI (nonblocking_collectives.hpp)
    return nonblocking::Outcome{MPI_SUCCESS, true, reason + "; a rank's datatype has no runs to copy"};
  }
  row.decision = "fallback";
  row.reason = std::move(reason);
  row.implementation = Implementation::NodeSharedMemory;
  row.algorithm = "node_shared_memory";
  row.bytes_host = result.bytes_host;
  row.chunks = result.chunks;
  row.streams = 1;
  return nonblocking::Outcome{result.ok ? MPI_SUCCESS : MPI_ERR_OTHER, false, {}};
}

std::optional<std::vector<ByteRun>> fallback_runs(int count, MPI_Datatype datatype) {
  return contiguous_message(count, datatype) ? std::vector<ByteRun>{}
                                             : datatype_runs(count, datatype, kMaxFallbackRuns);
}

} // namespace commlens::runtime
