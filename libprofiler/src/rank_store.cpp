#include "rank_store.hpp"

#include "commlens/profiler/rank_file.hpp"
#include "commlens/profiler/schema.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace commlens {

namespace {

std::int64_t as_int(std::uint64_t value) {
  return static_cast<std::int64_t>(value);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) {
    if (!text.empty()) {
      text += ',';
    }
    text += std::to_string(rank);
  }
  return text;
}

SqliteDatabase open_fresh(const std::string& path) {
  if (path != kInMemoryDatabase) {
    remove_rank_file(path); // an earlier run's, with its journal and trace pages
  }
  return SqliteDatabase(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
}

} // namespace

RankStore::RankStore(const std::string& path, int rank) : rank_(rank), path_(path), db_(open_fresh(path)) {
  // A persistent rollback journal without fsync: a committed flush survives the process being
  // killed (the data is in the page cache), which is the failure a profiler must survive; only a
  // power cut could lose it, and a flush cut short is rolled back from the journal by the next
  // writer that opens the file (the merge). Rows are appended, so the journal holds only the few
  // pages a flush changes and each chunk is written once; WAL wrote every chunk twice (into the
  // WAL, then at the checkpoint into the file), and that writer time was a third of a traced
  // call's cost at full rate (docs/performance.md). PERSIST keeps the journal file between flushes
  // instead of creating and deleting it at each. An fsync per flush stalled the writer long enough
  // for buffers to overflow at 2 M events/s. synchronous=OFF first: a journal mode switch under the
  // default synchronous=FULL syncs the file to disk (12 to 30 ms of every rank's MPI_Init with WAL).
  db_.exec("PRAGMA synchronous=OFF; PRAGMA journal_mode=PERSIST; PRAGMA temp_store=MEMORY;");
  // One transaction for the header and the whole schema: each statement committing on its own
  // wrote the WAL dozens of times at every rank's start.
  begin();
  db_.exec(fmt::format("PRAGMA application_id={}; PRAGMA user_version={};", schema::kApplicationId,
                       schema::kVersion));
  db_.exec(schema::kCreateTables);
  commit();
  insert_chunk_ = db_.prepare("INSERT INTO trace_chunks (thread, count, records) VALUES (?,?,?)");
  upsert_call_stats_ = db_.prepare("INSERT OR REPLACE INTO call_stats VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  upsert_thread_stats_ = db_.prepare("INSERT OR REPLACE INTO thread_stats VALUES (?,?,?,?,?)");
  upsert_run_value_ = db_.prepare("INSERT OR REPLACE INTO run VALUES (?,?)");
  upsert_communicator_ =
      db_.prepare("INSERT OR REPLACE INTO communicators VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  upsert_phase_ = db_.prepare("INSERT OR REPLACE INTO phases VALUES (?,?,?,?,?)");
  upsert_overhead_ = db_.prepare("INSERT OR REPLACE INTO profiler_overhead VALUES (?,?,?,?,?)");
  update_counters_ = db_.prepare(
      "UPDATE ranks SET threads=?, dropped_events=?, summary_overflow=?, finalize_ns=?, finalized=?, "
      "clock_offset_ns=?, clock_drift_ppb=?, mpi_wall_ns=? WHERE rank=?");
}

void RankStore::insert_rows(const std::string& insert_sql, const std::vector<std::vector<SqlValue>>& rows) {
  auto found = collector_statements_.find(insert_sql);
  if (found == collector_statements_.end()) {
    found = collector_statements_.emplace(insert_sql, db_.prepare(insert_sql)).first;
  }
  SqliteStatement& statement = found->second;
  for (const auto& row : rows) {
    for (std::size_t column = 0; column < row.size(); ++column) {
      const int index = static_cast<int>(column) + 1;
      std::visit(
          [&](const auto& value) {
            using Value = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<Value, std::monostate>) {
              statement.bind_null(index);
            } else if constexpr (std::is_same_v<Value, std::string>) {
              statement.bind(index, std::string_view(value));
            } else {
              statement.bind(index, value);
            }
          },
          row[column]);
    }
    statement.run();
  }
}

void RankStore::close() {
  collector_statements_.clear();
  insert_chunk_ = {};
  upsert_call_stats_ = {};
  upsert_thread_stats_ = {};
  upsert_run_value_ = {};
  upsert_communicator_ = {};
  upsert_phase_ = {};
  upsert_overhead_ = {};
  update_counters_ = {};
  // Every flush committed, so the persisted journal holds nothing to roll back: the file is left
  // alone, as readers (the merge attaches each rank file read-only) expect.
  db_.exec("PRAGMA journal_mode=DELETE");
  db_.close();
  if (path_ != kInMemoryDatabase) {
    std::remove((path_ + "-journal").c_str());
  }
}

void RankStore::insert_chunk(int thread, std::size_t count, std::span<const std::uint8_t> records) {
  insert_chunk_.bind(1, std::int64_t{thread}).bind(2, static_cast<std::int64_t>(count));
  sqlite3_bind_blob(insert_chunk_.get(), 3, records.data(), static_cast<int>(records.size()), SQLITE_STATIC);
  insert_chunk_.run();
}

void RankStore::write_catalog(const std::vector<FunctionDescription>& functions,
                              const std::vector<std::string>& datatypes, const ProcessIdentity& identity,
                              std::uint64_t init_ns, const TickConverter& clock) {
  begin();
  auto insert_datatype = db_.prepare("INSERT OR REPLACE INTO datatypes VALUES (?,?)");
  for (std::size_t index = 0; index < datatypes.size(); ++index) {
    insert_datatype.bind(1, static_cast<std::int64_t>(index + 1)).bind(2, datatypes[index]).run();
  }
  auto insert_function = db_.prepare("INSERT OR REPLACE INTO functions VALUES (?,?,?,?)");
  for (std::size_t id = 0; id < functions.size(); ++id) {
    if (functions[id].name != nullptr) {
      insert_function.bind(1, static_cast<std::int64_t>(id))
          .bind(2, functions[id].name)
          .bind(3, functions[id].family)
          .bind(4, static_cast<std::int64_t>(functions[id].tag_or_root))
          .run();
    }
  }
  db_.prepare(
         "INSERT OR REPLACE INTO ranks (rank, host, pid, init_ns, tick_origin, tick_origin_ns, ns_per_tick, "
         "job, job_rank) VALUES (?,?,?,?,?,?,?,?,?)")
      .bind(1, std::int64_t{identity.run_rank})
      .bind(2, identity.host)
      .bind(3, std::int64_t{identity.pid})
      .bind(4, as_int(init_ns))
      .bind(5, as_int(clock.origin_ticks()))
      .bind(6, as_int(clock.origin_ns()))
      .bind(7, clock.ns_per_tick())
      .bind(8, std::int64_t{identity.job})
      .bind(9, std::int64_t{identity.world_rank})
      .run();
  db_.prepare("INSERT OR REPLACE INTO jobs (job, first_rank, size, spawned) VALUES (?,?,?,?)")
      .bind(1, std::int64_t{identity.job})
      .bind(2, std::int64_t{identity.run_rank - identity.world_rank})
      .bind(3, std::int64_t{identity.world_size})
      .bind(4, std::int64_t{identity.spawned})
      .run();
  commit();
}

void RankStore::replace_call_stats(const std::vector<CallStatsRow>& rows) {
  auto& s = upsert_call_stats_;
  for (const CallStatsRow& row : rows) {
    s.bind(1, std::int64_t{rank_}).bind(2, std::int64_t{row.function_id}).bind(3, row.comm_id);
    s.bind(4, std::int64_t{row.size_bin}).bind(5, std::int64_t{row.peer}).bind(6, std::int64_t{row.phase});
    s.bind(7, as_int(row.count)).bind(8, as_int(row.bytes_sent)).bind(9, as_int(row.bytes_recv));
    s.bind(10, as_int(row.time_total_ns)).bind(11, as_int(row.time_min_ns)).bind(12, as_int(row.time_max_ns));
    s.run();
  }
}

void RankStore::replace_thread_stats(const std::vector<ThreadStatsRow>& rows) {
  auto& s = upsert_thread_stats_;
  for (const ThreadStatsRow& row : rows) {
    s.bind(1, std::int64_t{rank_}).bind(2, std::int64_t{row.thread}).bind(3, std::int64_t{row.phase});
    s.bind(4, as_int(row.calls)).bind(5, as_int(row.time_in_mpi_ns));
    s.run();
  }
}

void RankStore::replace_run_values(const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    upsert_run_value_.bind(1, key).bind(2, value).run();
  }
}

void RankStore::replace_communicators(const std::vector<CommunicatorInfo>& communicators,
                                      std::uint64_t init_ns) {
  const auto relative = [init_ns](std::uint64_t ns) { return static_cast<std::int64_t>(ns - init_ns); };
  auto& s = upsert_communicator_;
  for (std::size_t index = 0; index < communicators.size(); ++index) {
    const CommunicatorInfo& info = communicators[index];
    s.bind(1, info.id).bind(2, std::int64_t{rank_}).bind(3, std::int64_t{info.local_rank});
    s.bind(4, static_cast<std::int64_t>(info.members.size())).bind(5, std::int64_t{info.is_inter});
    s.bind(6, join_ranks(info.members));
    if (info.is_inter) {
      s.bind(7, join_ranks(info.remote_members));
    } else {
      s.bind_null(7);
    }
    s.bind_integer(8, info.parent_id >= 0 ? std::optional<std::int64_t>(info.parent_id) : std::nullopt);
    s.bind_integer(9, info.created_by != 0 ? std::optional<int>(info.created_by) : std::nullopt);
    s.bind(10, info.name);
    s.bind_integer(11, info.created_ns != 0 ? std::optional(relative(info.created_ns)) : std::nullopt);
    s.bind_integer(12, info.freed_ns != 0 ? std::optional(relative(info.freed_ns)) : std::nullopt);
    s.bind(13, static_cast<std::int64_t>(index));
    s.run();
  }
}

void RankStore::replace_phases(const std::vector<PhaseRow>& phases) {
  for (const PhaseRow& phase : phases) {
    upsert_phase_.bind(1, std::int64_t{rank_}).bind(2, std::int64_t{phase.phase}).bind(3, phase.start_ns);
    upsert_phase_.bind_integer(4, phase.end_ns);
    upsert_phase_.bind_integer(5, phase.pcontrol_level);
    upsert_phase_.run();
  }
}

void RankStore::replace_overhead(const std::map<std::string, OverheadTotals>& overhead) {
  for (const auto& [component, totals] : overhead) {
    upsert_overhead_.bind(1, std::int64_t{rank_}).bind(2, component).bind(3, as_int(totals.count));
    upsert_overhead_.bind(4, as_int(totals.time_ns)).bind_integer(5, totals.cpu_time_ns).run();
  }
}

void RankStore::update_counters(const RankCounters& counters) {
  auto& s = update_counters_;
  s.bind(1, std::int64_t{counters.threads}).bind(2, as_int(counters.dropped_events));
  s.bind(3, as_int(counters.summary_overflow));
  s.bind_integer(4, counters.finalize_ns);
  s.bind(5, std::int64_t{counters.finalize_ns.has_value()});
  s.bind(6, counters.alignment.offset_ns).bind(7, counters.alignment.drift_ppb);
  s.bind(8, as_int(counters.mpi_wall_ns)).bind(9, std::int64_t{rank_});
  s.run();
}

} // namespace commlens
