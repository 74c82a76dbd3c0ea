#include "commlens/analysis/function_histograms.hpp"

#include "report_queries.hpp"

namespace commlens::analysis {

std::vector<FunctionStats> query_function_histograms(const Database& database, const ReportFilter& filter) {
  return detail::query_function_stats(database, filter);
}

} // namespace commlens::analysis
