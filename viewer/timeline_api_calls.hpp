#pragma once
// The CUDA API row of the timeline: per rank, under its call lanes, the host's CUDA runtime and
// driver API calls of one thread (cuda_api_calls.hpp), a runtime call above the driver calls it
// made. Painting, hit-testing and the tooltip text; the canvas decides where the row goes and draws
// the lines from each call to the GPU work it made (timeline_kernel_links.cpp).
#include "timeline_viewport.hpp"

#include "commlens/analysis/cuda_api_calls.hpp"

#include <QRectF>
#include <QString>

class QPainter;

namespace commlens::viewer {

// Nesting levels drawn one above the other; deeper calls share the last level.
inline constexpr int kMaxApiLevels = 2;

// "CUDA API", or with the thread when the rank has several API threads ("CUDA API t1", or
// "CUDA API tid 4242" for a thread that made no MPI or NCCL call).
QString api_lane_label(const analysis::CudaApiThread& thread, bool several_on_rank);
QString describe_api_lane(const analysis::CudaApiThread& thread);

void paint_api_calls(QPainter& painter, const TimelineViewport& viewport, const QRectF& row,
                     const std::vector<analysis::TimelineApiCall>& calls);
// Levels the calls occupy (1 to kMaxApiLevels), and where a call of `level` is drawn on `row`.
int api_levels(const std::vector<analysis::TimelineApiCall>& calls);
QRectF api_call_box(const TimelineViewport& viewport, const QRectF& row,
                    const analysis::TimelineApiCall& call, int levels);

// The call under time `time_ns` (within `slack_ns`) on nesting level `level`; null over nothing.
const analysis::TimelineApiCall* api_call_at(const std::vector<analysis::TimelineApiCall>& calls,
                                             std::int64_t time_ns, std::int64_t slack_ns, int level);
// `gpu_work`: tooltip lines naming what the call made (the canvas finds it); times are shown from
// `origin_ns` (the trace start).
QString describe_api_call(const analysis::TimelineApiCall& call, const analysis::CudaApiThread& thread,
                          std::int64_t origin_ns, const QString& gpu_work);

} // namespace commlens::viewer
