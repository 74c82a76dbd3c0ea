#include "copy_rows.hpp"

#include "plugin_context.hpp"

#include <string>

namespace commlens::cuda {

std::vector<SqlValue> copy_row(const CudaCopy& copy, const CopyClassification& classified,
                               std::int64_t start_ns, std::int64_t end_ns, std::uint64_t call_id,
                               bool gpu_timed) {
  const char* link = peer_link_name(classified.link);
  return {std::int64_t{host().run_rank},
          start_ns,
          end_ns,
          std::int64_t{copy.device},
          std::int64_t{copy.src_device},
          std::int64_t{copy.dst_device},
          std::string(memory_kind_name(copy.src_kind)),
          std::string(memory_kind_name(copy.dst_kind)),
          static_cast<std::int64_t>(copy.bytes),
          std::int64_t{copy.stream},
          std::string(copy_direction_name(copy.direction)),
          std::string(copy_path_name(classified.path)),
          link != nullptr ? SqlValue{std::string(link)} : SqlValue{},
          call_id != 0 ? SqlValue{static_cast<std::int64_t>(call_id)} : SqlValue{},
          std::int64_t{copy.correlation_id},
          copy.runtime_correlation_id != 0 ? SqlValue{std::int64_t{copy.runtime_correlation_id}} : SqlValue{},
          std::int64_t{gpu_timed ? 1 : 0},
          static_cast<std::int64_t>(copy.copies)};
}

void store_ipc_events(IpcTracker& tracker) {
  if (auto rows = tracker.take_rows(); !rows.empty()) {
    host().store_rows(
        "INSERT INTO ipc_events (rank, event, start_ns, end_ns, device, address, bytes, handle, "
        "open_number, mpi_call_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
        std::move(rows));
  }
}

} // namespace commlens::cuda
