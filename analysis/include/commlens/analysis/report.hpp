#pragma once
// The report model: plain data built from SQL aggregation over call_stats (present in summary and
// trace mode alike), shared by every output format and by the viewer. Times are nanoseconds.
#include "commlens/analysis/database.hpp"
#include "commlens/analysis/findings.hpp"
#include "commlens/analysis/training_steps.hpp"
#include "commlens/analysis/units.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens::analysis {

struct ReportFilter {
  std::optional<int> rank{};  // one world rank; all when empty
  std::optional<int> phase{}; // one MPI_Pcontrol phase; all when empty
  // One user NVTX range path ("train" or "train/step"): only the calls that start inside a range
  // with that path or one nested in it. Needs trace mode (call times); all when empty.
  std::optional<std::string> nvtx_range{};
};

struct RankTime {
  int rank = 0;
  std::string host;
  // MPI_Init to MPI_Finalize (or the phase's span under a phase filter); empty if the rank never
  // finalized, because then its end is unknown.
  std::optional<std::int64_t> application_ns;
  // Wall time during which at least one of the rank's threads was inside MPI. Where the database
  // has no such figure (older files, or a phase or NVTX filter on a rank with several calling
  // threads) it is the time summed over threads, and mpi_ns_summed_over_threads says so.
  std::int64_t mpi_ns = 0;
  std::int64_t mpi_thread_sum_ns = 0; // the rank's threads' times inside MPI, added up
  int threads = 0;                    // threads that made MPI calls (0 when unknown)
  bool mpi_ns_summed_over_threads = false;
  std::uint64_t calls = 0;
  std::optional<double> mpi_share; // mpi_ns / application_ns
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
  bool finalized = false;
};

// One thread of a rank that made MPI calls from several threads: its own calls and time in MPI.
struct ThreadTime {
  int rank = 0;
  int thread = 0; // as mpi_calls.thread: the order in which the rank's threads first called MPI
  std::uint64_t calls = 0;
  std::int64_t mpi_ns = 0;
  std::optional<double> mpi_share; // of the rank's application time
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

// Calls, bytes and time on one communicator, named for people by its size and how it was made
// ("MPI_COMM_WORLD", "size 2 from MPI_Comm_split of MPI_COMM_WORLD").
struct CommunicatorStats {
  std::int64_t id = 0;
  std::string label;
  int size = 0;
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0; // sent + received
  std::int64_t time_total_ns = 0;
};

// Point-to-point traffic from one world rank to another (sends with a resolved peer): MPI's and
// NCCL's together, NCCL's share apart.
struct PartnerTraffic {
  int from = 0;
  int to = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::uint64_t nccl_messages = 0; // of messages, those of ncclSend
  std::uint64_t nccl_bytes = 0;
};

// What one rank sent in collectives, through MPI and through NCCL: collectives have no single
// partner, so the partner matrix cannot show them.
struct CollectiveTraffic {
  int rank = 0;
  std::uint64_t mpi_calls = 0;
  std::uint64_t mpi_bytes = 0;
  std::uint64_t nccl_calls = 0;
  std::uint64_t nccl_bytes = 0;
};

// Queue time (post to completion) of the nonblocking operations one function posted.
struct QueueTimeStats {
  std::string function;
  std::uint64_t operations = 0;
  std::int64_t median_ns = 0;
  std::int64_t p95_ns = 0;
  std::int64_t max_ns = 0;
};

// How many MPI calls of one rank were in flight at once, across its threads.
struct RankConcurrency {
  int rank = 0;
  int threads = 0;
  int max_in_flight = 0;
  std::int64_t overlapped_ns = 0; // time with two or more calls in flight
};

// One MPI_Pcontrol phase across the ranks that reached it, with its busiest functions.
struct PhaseStats {
  int phase = 0;
  int ranks = 0;
  std::int64_t start_ns = 0;          // earliest start across ranks
  std::optional<std::int64_t> end_ns; // latest end; empty while a rank left it open
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;
  std::int64_t time_total_ns = 0;
  std::vector<std::string> top_functions; // by time, at most three
};

// One user NVTX range path as a phase: the ranges with that path on every rank and the traced MPI
// calls whose innermost enclosing range has it ("outer/inner": inner nested in outer).
struct NvtxPhaseStats {
  std::string path;
  int ranks = 0;
  std::uint64_t ranges = 0;       // how many ranges had this path
  std::int64_t range_time_ns = 0; // their summed durations
  std::uint64_t calls = 0;        // calls and the rest: trace mode only (nvtx_calls_placed)
  std::uint64_t bytes = 0;
  std::int64_t time_total_ns = 0;
  std::vector<std::string> top_functions; // by time, at most three
};

// Why a section has no rows: the run did not record its data (`how_to_record` says how to), or it
// recorded it and there is nothing to show (`how_to_record` empty).
struct Absence {
  std::string reason; // empty when the section has rows
  std::string how_to_record;
  bool empty() const noexcept { return reason.empty(); }
};

// A column of a section's table: its title for people and its JSON key, which names its unit
// ("time_ns", "bandwidth_gb_per_s").
struct TableColumn {
  std::string title;
  std::string key;
  Unit unit = Unit::Text;
};

// A report section whose rows live in tables other collectors add, filled by the section's own
// query; `absent` says why it has none.
struct OptionalSection {
  Absence absent;
  std::vector<TableColumn> columns;
  std::vector<std::vector<Cell>> rows; // one cell per column, numbers in the column's unit
};

// Reported while a report is built, for a progress line on a terminal.
using ReportProgress = std::function<void(std::string_view section, int done, int total)>;

struct Report {
  std::string database_path;
  int schema_version = 0;
  bool trace_mode = false; // the run kept every call (COMMLENS_MODE=trace), not only summaries
  ReportFilter filter;
  std::vector<std::pair<std::string, std::string>> run; // the run table, by key
  std::vector<RankTime> ranks;                          // ascending rank
  std::optional<RankSpread> mpi_time_spread;            // empty without ranks
  std::optional<RankSpread> mpi_share_spread;           // empty unless every rank has a share
  std::vector<FunctionStats> functions;                 // most time first
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
  // World ranks a merged run lacks (their files never arrived): every table covers the rest only.
  std::vector<int> missing_ranks;
  // The jobs of a run whose program spawned some ("0: ranks 0-1 (launched); 1: ranks 2-3
  // (spawned)"); empty for a run of one job.
  std::string jobs;

  std::vector<CommunicatorStats> communicators; // most time first
  std::vector<PartnerTraffic> partners;         // ascending (from, to)
  std::vector<CollectiveTraffic> collectives;   // ascending rank; ranks that made collectives
  std::vector<QueueTimeStats> queue_times;      // most operations first; trace mode only
  Absence queue_times_absent;                   // why queue_times is empty, when it is
  std::vector<RankConcurrency> concurrency;     // ranks with more than one calling thread
  Absence concurrency_absent;
  std::vector<ThreadTime> threads; // ranks with more than one calling thread, ascending
  Absence threads_absent;
  // The earliest phase start across ranks: phase starts are on rank 0's clock from its MPI_Init,
  // so a rank that started first has a negative one; tables show starts from this time.
  std::int64_t run_start_ns = 0;
  std::vector<PhaseStats> phases;          // ascending phase
  std::vector<NvtxPhaseStats> nvtx_phases; // ascending path
  Absence nvtx_phases_absent;              // why nvtx_phases is empty, when it is
  bool nvtx_calls_placed = false;          // false in summary mode: calls carry no times
  OptionalSection mpit;                    // MPI_T pvar summaries
  OptionalSection cuda_copies;             // CUDA copy paths: bytes, count, bandwidth per path
  OptionalSection runtime_decisions;
  OptionalSection nccl;         // NCCL calls: enqueue (host) time and kernel (device) time per function
  TrainingSteps training_steps; // MPI_Pcontrol(2) phases as training steps
  FindingsSection findings;     // what is wrong, most cost first (findings.cpp, built last)
};

// The two sections that read every traced request and call: at 10 M calls they are most of a
// report's time. A caller that shows neither (the viewer) leaves them out; their `absent` says so.
// The findings read the whole trace too (wait states); a caller that shows the rest first leaves
// them out and finds them later with build_findings.
struct ReportSections {
  bool queue_times = true;
  bool concurrency = true;
  bool findings = true;
};

// Throws FilterError for a rank or phase the database does not hold, DatabaseError on SQL failure.
Report build_report(const Database& database, const ReportFilter& filter = {},
                    const ReportProgress& progress = {}, const ReportSections& sections = {});
// The findings of `report`, built from `database` without them (ReportSections::findings false).
FindingsSection build_findings(const Database& database, const Report& report);

} // namespace commlens::analysis
