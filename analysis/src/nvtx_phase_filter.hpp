#pragma once
// The NVTX half of `--phase`: while a report is built for one NVTX range path, the connection holds
// TEMP tables and views named call_stats, mpi_calls and mpi_requests that hold only the calls
// placed in that range. SQLite resolves an unqualified name to the temp schema first, so every
// report query, written once against the stored tables, reads the selection without knowing it.
#include "commlens/analysis/report.hpp"
#include "nvtx_range_sweep.hpp"

#include <cstdint>
#include <map>

namespace commlens::analysis::detail {

class NvtxPhaseFilter {
public:
  // Does nothing without filter.nvtx_range. Throws FilterError when no user range has that path or
  // the database is not a trace (summary mode keeps no call times to place calls in ranges).
  NvtxPhaseFilter(const Database& database, const ReportFilter& filter);
  ~NvtxPhaseFilter(); // drops the temp tables, so the database reads as stored again
  NvtxPhaseFilter(const NvtxPhaseFilter&) = delete;
  NvtxPhaseFilter& operator=(const NvtxPhaseFilter&) = delete;

  // Under the filter a rank's application time is the time inside the selected ranges (their
  // union), and its share of time in MPI is taken of that.
  void apply_range_time(std::vector<RankTime>& ranks) const;

private:
  void select_calls(const std::vector<NvtxRange>& ranges, const std::string& selected);
  void drop_temp_objects() const noexcept;
  void execute(std::string_view sql) const;

  const Database& database_;
  bool active_ = false;
  std::map<int, std::int64_t> range_time_by_rank_;
};

} // namespace commlens::analysis::detail
