#include "timeline_activity.hpp"

#include <algorithm>

namespace commlens::viewer {
namespace {

// Adds the part of [start_ns, end_ns) busy for `busy_ns` to the slices it covers, spread evenly.
void add_busy(std::vector<double>& busy, std::int64_t origin_ns, double slice_ns, std::int64_t start_ns,
              std::int64_t end_ns, double busy_ns) {
  const auto last = static_cast<std::int64_t>(busy.size()) - 1;
  const double span = static_cast<double>(std::max<std::int64_t>(end_ns - start_ns, 1));
  auto first_slice =
      std::clamp<std::int64_t>(static_cast<std::int64_t>((start_ns - origin_ns) / slice_ns), 0, last);
  const auto last_slice =
      std::clamp<std::int64_t>(static_cast<std::int64_t>((end_ns - origin_ns) / slice_ns), 0, last);
  for (auto slice = first_slice; slice <= last_slice; ++slice) {
    const double slice_start = origin_ns + slice * slice_ns, slice_end = slice_start + slice_ns;
    const double overlap = std::min<double>(slice_end, end_ns) - std::max<double>(slice_start, start_ns);
    if (overlap > 0)
      busy[static_cast<std::size_t>(slice)] += busy_ns * overlap / span;
  }
}

} // namespace

std::vector<double> query_mpi_activity(const analysis::Database& database,
                                       const analysis::TimelineExtent& extent, int slices) {
  std::vector<double> busy(static_cast<std::size_t>(std::max(slices, 1)), 0.0);
  const auto span = extent.end_ns - extent.start_ns;
  if (extent.lanes.empty() || span <= 0)
    return busy;
  const double slice_ns = static_cast<double>(span) / static_cast<double>(busy.size());
  // Bins a few slices wide are read (and spread over their slices): a quarter of the rows to read,
  // for a strip a few pixels high where the difference does not show.
  constexpr double kSlicesPerBin = 4;
  const auto resolution = std::max<std::int64_t>(1, static_cast<std::int64_t>(slice_ns * kSlicesPerBin));
  for (const auto& lane : extent.lanes) {
    const auto window =
        analysis::query_timeline_window(database, lane, extent.start_ns, extent.end_ns + 1, resolution);
    for (const auto& call : window.calls)
      add_busy(busy, extent.start_ns, slice_ns, call.start_ns, call.end_ns,
               static_cast<double>(call.end_ns - call.start_ns));
    for (const auto& bin : window.bins)
      add_busy(busy, extent.start_ns, slice_ns, bin.start_ns, bin.end_ns, static_cast<double>(bin.busy_ns));
  }
  for (auto& share : busy)
    share = std::min(1.0, share / (slice_ns * static_cast<double>(extent.lanes.size())));
  return busy;
}

} // namespace commlens::viewer
