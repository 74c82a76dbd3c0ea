#pragma once
// This rank's SQLite file: schema, pragmas and one prepared statement per table the writer fills.
// Only the writer thread touches it.
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/communicator_table.hpp"
#include "commlens/profiler/rank_records.hpp"
#include "commlens/profiler/sqlite.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace commlens {

// The path RankStore opens for Profiler::Storage::Discarded: SQLite keeps it in memory.
inline constexpr const char* kInMemoryDatabase = ":memory:";

struct CallStatsRow {
  int function_id;
  std::int64_t comm_id;
  int size_bin;
  int peer;
  int phase;
  std::uint64_t count, bytes_sent, bytes_recv, time_total_ns, time_min_ns, time_max_ns;
};

struct ThreadStatsRow {
  int thread;
  int phase;
  std::uint64_t calls, time_in_mpi_ns;
};

struct PhaseRow {
  int phase;
  std::int64_t start_ns;
  std::optional<std::int64_t> end_ns;
  std::optional<int> pcontrol_level;
};

struct RankCounters {
  int threads = 0;
  std::uint64_t dropped_events = 0;
  std::uint64_t summary_overflow = 0;
  std::uint64_t mpi_wall_ns = 0;
  std::optional<std::int64_t> finalize_ns;
  ClockAlignment alignment;
};

class RankStore {
public:
  // Replaces any file left at `path` by an earlier run. Throws SqliteError naming the file.
  RankStore(const std::string& path, int rank);

  void write_catalog(const std::vector<FunctionDescription>& functions,
                     const std::vector<std::string>& datatypes, const ProcessIdentity& identity,
                     std::uint64_t init_ns, const TickConverter& clock);
  void begin() { db_.exec("BEGIN"); }
  void commit() { db_.exec("COMMIT"); }

  void insert_chunk(int thread, std::size_t count, std::span<const std::uint8_t> records);
  void replace_call_stats(const std::vector<CallStatsRow>& rows);
  void replace_thread_stats(const std::vector<ThreadStatsRow>& rows);
  void replace_run_values(const std::map<std::string, std::string>& values);
  void replace_communicators(const std::vector<CommunicatorInfo>& communicators, std::uint64_t init_ns);
  void replace_phases(const std::vector<PhaseRow>& phases);
  void replace_overhead(const std::map<std::string, OverheadTotals>& overhead);
  void update_counters(const RankCounters& counters);
  void insert_rows(const std::string& insert_sql, const std::vector<std::vector<SqlValue>>& rows);
  void close();

private:
  int rank_;
  std::string path_;
  SqliteDatabase db_;
  SqliteStatement insert_chunk_;
  SqliteStatement upsert_call_stats_;
  SqliteStatement upsert_thread_stats_;
  SqliteStatement upsert_run_value_;
  SqliteStatement upsert_communicator_;
  SqliteStatement upsert_phase_;
  SqliteStatement upsert_overhead_;
  SqliteStatement update_counters_;
  std::map<std::string, SqliteStatement> collector_statements_; // by insert_rows SQL
};

} // namespace commlens
