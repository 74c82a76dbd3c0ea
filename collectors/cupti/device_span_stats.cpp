#include "device_span_stats.hpp"

#include <algorithm>

namespace commlens::cuda {

void DeviceSpanStats::add(FunctionId function, std::int64_t comm_id, std::int16_t size_bin,
                          std::uint16_t phase, std::int64_t duration_ns) {
  Times& times = times_[{function, comm_id, size_bin, phase}];
  times.min_ns = times.count == 0 ? duration_ns : std::min(times.min_ns, duration_ns);
  times.max_ns = std::max(times.max_ns, duration_ns);
  times.total_ns += duration_ns;
  ++times.count;
}

std::vector<std::vector<SqlValue>> DeviceSpanStats::take_rows(int rank) {
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(times_.size());
  for (const auto& [key, times] : times_) {
    const auto& [function, comm_id, size_bin, phase] = key;
    rows.push_back({std::int64_t{rank}, std::int64_t{function}, comm_id, std::int64_t{size_bin},
                    std::int64_t{phase}, times.count, times.total_ns, times.min_ns, times.max_ns});
  }
  times_.clear();
  return rows;
}

} // namespace commlens::cuda
