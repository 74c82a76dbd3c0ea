#include "copy_runs.hpp"

#include <tuple>
#include <unordered_map>

namespace commlens::cuda {

namespace {

// What a copy must share with a run to join it: the route and stream of its row, and where it was
// made (call, phase, thread).
auto run_key(const CopyCall& call) {
  const CudaCopy& c = call.copy;
  return std::tie(call.thread, call.call_id, call.phase, c.device, c.src_device, c.dst_device, c.src_kind,
                  c.dst_kind, c.direction, c.stream, c.touches_ipc_mapping, c.managed_migration);
}

} // namespace

std::vector<CopyCall> merge_copy_runs(std::vector<CopyCall> calls, std::uint64_t max_gap_ns) {
  std::vector<CopyCall> merged;
  merged.reserve(calls.size());
  std::unordered_map<std::uint32_t, std::size_t> open_run; // thread -> its run's index in `merged`
  for (CopyCall& call : calls) {
    if (call.gpu_timed) {
      merged.push_back(std::move(call));
      continue;
    }
    const auto open = open_run.find(call.thread);
    if (open != open_run.end()) {
      CopyCall& run = merged[open->second];
      if (run_key(run) == run_key(call) && call.copy.start_ns >= run.copy.end_ns &&
          call.copy.start_ns - run.copy.end_ns <= max_gap_ns) {
        run.copy.bytes += call.copy.bytes;
        run.copy.copies += call.copy.copies;
        run.copy.end_ns = call.copy.end_ns;
        continue;
      }
    }
    open_run[call.thread] = merged.size();
    merged.push_back(std::move(call));
  }
  return merged;
}

} // namespace commlens::cuda
