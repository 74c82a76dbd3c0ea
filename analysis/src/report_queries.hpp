#pragma once
// The SQL behind each part of the report model; build_report assembles them. Every query binds the
// filter as ?1 = rank and ?2 = phase (NULL selects all), so a new report part filters the same way.
#include "commlens/analysis/report.hpp"

#include <vector>

namespace commlens::analysis::detail {

std::vector<std::pair<std::string, std::string>> query_run_metadata(const Database& database);
std::vector<RankTime> query_rank_times(const Database& database, const ReportFilter& filter);
std::vector<FunctionStats> query_function_stats(const Database& database, const ReportFilter& filter);

// Binds the filter to ?1 (rank) and ?2 (phase).
inline void bind_filter(Statement& statement, const ReportFilter& filter) {
  statement.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  statement.bind(2, filter.phase ? std::optional<std::int64_t>(*filter.phase) : std::nullopt);
}

} // namespace commlens::analysis::detail
