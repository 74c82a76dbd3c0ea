#pragma once
// The report model: plain data built from SQL aggregation over call_stats (present in summary and
// trace mode alike), shared by every output format and by the viewer. Times are nanoseconds.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens::analysis {

struct ReportFilter {
  std::optional<int> rank;  // one world rank; all when empty
  std::optional<int> phase; // one MPI_Pcontrol phase; all when empty
};

struct RankTime {
  int rank = 0;
  std::string host;
  // MPI_Init to MPI_Finalize (or the phase's span under a phase filter); empty if the rank never
  // finalized, because then its end is unknown.
  std::optional<std::int64_t> application_ns;
  std::int64_t mpi_ns = 0;
  std::uint64_t calls = 0;
  std::optional<double> mpi_share; // mpi_ns / application_ns
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
  bool finalized = false;
};

// min/mean/max of one per-rank quantity. imbalance = max / mean - 1: the share of time the
// slowest rank spends beyond an even spread (0 when balanced).
struct RankSpread {
  double min = 0;
  double mean = 0;
  double max = 0;
  int min_rank = 0;
  int max_rank = 0;
  double imbalance = 0;
};

struct SizeBinStats {
  int size_bin = 0;  // k: bytes in [2^k, 2^(k+1)); kZeroBytesBin for zero bytes
  std::string key;   // "2^10"
  std::string label; // "[1KiB, 2KiB)"
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
  std::int64_t time_total_ns = 0;
};

struct FunctionStats {
  int function_id = 0;
  std::string name;
  std::string family;
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
  std::int64_t time_total_ns = 0;
  std::int64_t time_min_ns = 0;
  std::int64_t time_max_ns = 0;
  double share_of_mpi_time = 0;
  std::vector<SizeBinStats> size_histogram; // ascending size_bin
};

struct Report {
  std::string database_path;
  int schema_version = 0;
  ReportFilter filter;
  std::vector<std::pair<std::string, std::string>> run; // the run table, by key
  std::vector<RankTime> ranks;                          // ascending rank
  std::optional<RankSpread> mpi_time_spread;            // empty without ranks
  std::optional<RankSpread> mpi_share_spread;           // empty unless every rank has a share
  std::vector<FunctionStats> functions;                 // most time first
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
};

// Throws FilterError for a rank or phase the database does not hold, DatabaseError on SQL failure.
Report build_report(const Database& database, const ReportFilter& filter = {});

} // namespace commlens::analysis
