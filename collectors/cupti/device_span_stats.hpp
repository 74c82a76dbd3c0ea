#pragma once
// device_span_stats: the GPU time of NCCL calls per function, communicator, size bin and phase
// (the call_stats key without the peer), kept in both modes. No CUDA: unit-tested on any machine.
#include "commlens/profiler/event_record.hpp"
#include "commlens/profiler/profiler.hpp"

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

namespace commlens::cuda {

class DeviceSpanStats {
public:
  static constexpr std::string_view kInsertSql =
      "INSERT INTO device_span_stats (rank, function_id, comm_id, size_bin, phase, count, time_total_ns, "
      "time_min_ns, time_max_ns) VALUES (?,?,?,?,?,?,?,?,?)";

  void add(FunctionId function, std::int64_t comm_id, std::int16_t size_bin, std::uint16_t phase,
           std::int64_t duration_ns);
  // The rows for kInsertSql, one per key; the statistics start again empty.
  std::vector<std::vector<SqlValue>> take_rows(int rank);

private:
  using Key = std::tuple<FunctionId, std::int64_t, std::int16_t, std::uint16_t>;
  struct Times {
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
  };
  std::map<Key, Times> times_;
};

} // namespace commlens::cuda
