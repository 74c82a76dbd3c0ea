#pragma once
// The SQL behind each part of the report model; build_report assembles them. Every query binds the
// filter as ?1 = rank and ?2 = phase (NULL selects all), so a new report part filters the same way.
#include "commlens/analysis/report.hpp"
#include "names/function_names.hpp"

#include <map>
#include <vector>

namespace commlens::analysis::detail {

std::vector<std::pair<std::string, std::string>> query_run_metadata(const Database& database);
std::string describe_jobs(const Database& database);
// One value of the run table; empty when the key is not there.
std::string run_value(const Database& database, std::string_view key);
std::vector<RankTime> query_rank_times(const Database& database, const ReportFilter& filter);
struct ThreadTimeSection {
  std::vector<ThreadTime> threads;
  Absence absent;
};
ThreadTimeSection query_thread_times(const Database& database, const ReportFilter& filter);
std::vector<FunctionStats> query_function_stats(const Database& database, const ReportFilter& filter);
std::vector<CommunicatorStats> query_communicators(const Database& database, const ReportFilter& filter);
std::vector<PartnerTraffic> query_partners(const Database& database, const ReportFilter& filter);
std::vector<CollectiveTraffic> query_collective_traffic(const Database& database, const ReportFilter& filter);
std::vector<QueueTimeStats> query_queue_times(const Database& database, const ReportFilter& filter);
std::vector<RankConcurrency> query_concurrency(const Database& database, const ReportFilter& filter);
std::vector<PhaseStats> query_phases(const Database& database, const ReportFilter& filter);

struct NvtxPhaseSection {
  std::vector<NvtxPhaseStats> phases;
  Absence absent;
  bool calls_placed = false;
};
NvtxPhaseSection query_nvtx_phases(const Database& database, const ReportFilter& filter);
OptionalSection query_mpit_section(const Database& database, const ReportFilter& filter);
OptionalSection query_pvar_summary(const Database& database,
                                   const ReportFilter& filter); // pvar_summary_query.cpp
OptionalSection query_cuda_copy_section(const Database& database, const ReportFilter& filter);
OptionalSection query_runtime_decision_section(const Database& database, const ReportFilter& filter);
OptionalSection query_nccl_section(const Database& database, const ReportFilter& filter);

// A section the database holds no data for, and one with these columns and no rows yet.
inline OptionalSection absent_section(std::string reason, std::string how_to_record) {
  OptionalSection section;
  section.absent = {std::move(reason), std::move(how_to_record)};
  return section;
}
inline OptionalSection section_with(std::vector<TableColumn> columns) {
  OptionalSection section;
  section.columns = std::move(columns);
  return section;
}

// Binds the filter to ?1 (rank) and ?2 (phase).
inline void bind_filter(Statement& statement, const ReportFilter& filter) {
  statement.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  statement.bind(2, filter.phase ? std::optional<std::int64_t>(*filter.phase) : std::nullopt);
}

} // namespace commlens::analysis::detail
