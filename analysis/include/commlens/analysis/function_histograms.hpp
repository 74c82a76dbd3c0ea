#pragma once
// Calls, bytes, time and the message-size histogram per function for one filter, without building
// the rest of the report: the viewer reads them again each time its phase selector changes.
#include "commlens/analysis/report.hpp"

#include <vector>

namespace commlens::analysis {

// Most time first, each with its histogram in ascending size bin. Reads call_stats only.
std::vector<FunctionStats> query_function_histograms(const Database& database, const ReportFilter& filter);

} // namespace commlens::analysis
