#pragma once
// The GPU rows of the timeline: each CUDA stream's lane and the host's CUDA synchronisation row.
// On a stream lane the NCCL calls' time on the GPU (CUDA events) is drawn behind, pale; copies
// (by path), memsets and kernels (compute or communication) on top. Painting, hit-testing and the
// tooltip texts; the canvas decides where the rows go.
#include "loaded_database.hpp"
#include "timeline_fetcher.hpp"
#include "timeline_viewport.hpp"

#include <QRectF>
#include <QString>

class QPainter;

namespace commlens::viewer {

// The copies of one route by one rank on one GPU: a row of the copy paths tab.
struct CopySelection {
  analysis::CopyRoute route;
  int rank = 0;
  int device = 0;
  bool contains(const analysis::TimelineCopy& copy, int copy_rank) const;
};

// "GPU0 s7", or "GPU0 NCCL" for a stream known only from NCCL calls' events.
QString stream_label(const analysis::GpuStream& stream);
QString describe_stream(const analysis::GpuStream& stream);
// "host_staged, host to device, pageable": a route in words; "host_staged HtoD pageable" in short.
QString route_text(const analysis::CopyRoute& route);
QString route_short_text(const analysis::CopyRoute& route);

// With a `selection`, copies outside it are greyed so the chosen ones stand out.
void paint_stream(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                  const StreamWork& work, int rank, const LoadedDatabase& database,
                  const std::optional<CopySelection>& selection);
void paint_synchronizations(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                            const std::vector<analysis::TimelineSynchronization>& waits);

// What lies under time `time_ns` (within `slack_ns`) on a stream lane, kernels first; times are
// shown from `origin_ns` (the trace start). Empty over nothing.
QString describe_stream_at(const StreamWork& work, std::int64_t time_ns, std::int64_t slack_ns, int rank,
                           const LoadedDatabase& database);
QString describe_synchronization_at(const std::vector<analysis::TimelineSynchronization>& waits,
                                    std::int64_t time_ns, std::int64_t slack_ns, int rank,
                                    std::int64_t origin_ns);
QString describe_copy(const analysis::TimelineCopy& copy, int rank, std::int64_t origin_ns);

} // namespace commlens::viewer
