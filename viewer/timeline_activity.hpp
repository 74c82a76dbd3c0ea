#pragma once
// The whole run at a glance, for the timeline's overview strip: in each of `slices` equal slices
// of the traced span, the share of lanes that were inside MPI calls (0 to 1). Read through the
// level-of-detail tiles, so it costs a few thousand rows per lane however long the trace.
#include "commlens/analysis/timeline.hpp"

#include <vector>

namespace commlens::viewer {

std::vector<double> query_mpi_activity(const analysis::Database& database,
                                       const analysis::TimelineExtent& extent, int slices);

} // namespace commlens::viewer
