#include "commlens/profiler/merge.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/nccl_call_chunk.hpp"
#include "commlens/profiler/schema.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "merge_plan.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"
#include "trace_pages_merge.hpp"
#include "trace_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace commlens {

namespace fs = std::filesystem;

namespace {

std::string mapped(const char* column, const ClockMap& map) {
  return fmt::format("({0} + ({1}) - CAST({0} * ({2:.17g}) AS INTEGER))", column, map.shift, map.drift);
}

// "(columns) SELECT values" copying src.`table`, with timestamp columns moved onto rank 0's
// timeline; empty when the rank file has no such table (written by an older commlens).
std::string copy_clause(SqliteDatabase& merged, const schema::TableMerge& rule, const ClockMap& map) {
  const std::string timestamps = std::string(",") + rule.timestamp_columns + ",";
  auto columns = merged.prepare(fmt::format("PRAGMA src.table_info({})", rule.table));
  std::string names;
  std::string values;
  while (columns.step()) {
    const std::string column = columns.column_text(1);
    const char* separator = names.empty() ? "" : ", ";
    names += separator + column;
    values += separator;
    values += timestamps.find("," + column + ",") != std::string::npos ? mapped(column.c_str(), map) : column;
  }
  return names.empty() ? "" : fmt::format("({}) SELECT {} FROM src.{}", names, values, rule.table);
}

// Copies one attached rank file ("src") into the merged database, on rank 0's timeline; its calls
// go to `tiles` too, and its trace rows through `bulk` when not null: as the pages the rank
// encoded at MPI_Finalize where `pages_allowed` and they are still valid, else from its chunks.
struct CopiedRank {
  std::optional<std::uint64_t> calls;       // decoded from chunks or encoded by the rank; nullopt:
                                            // the file had call rows of its own, which `tiles` did not see
  std::vector<RequestValues> late_requests; // for INSERTs once `bulk` has written its pages
  bool from_rank_pages = false;
};
CopiedRank copy_rank(SqliteDatabase& merged, const PlannedRank& rank, const MergePlan& plan,
                     TimelineTileBuilder& tiles, SqliteBulkLoader* bulk, bool pages_allowed) {
  const bool call_rows = attached_has_rows(merged, "mpi_calls");
  for (const schema::TableMerge& rule : schema::kTableMerges) {
    const std::string clause = copy_clause(merged, rule, rank.map);
    if (!clause.empty()) {
      merged.exec(fmt::format("INSERT OR {} INTO {} {}", rule.first_rank_wins ? "IGNORE" : "REPLACE",
                              rule.table, clause));
    }
  }
  std::string why;
  const std::optional<RankPagesToCopy> pages =
      bulk != nullptr && pages_allowed
          ? rank_pages_to_copy(merged, rank.file.path, rank.map, plan.tile_widths, *bulk, why)
          : std::nullopt;
  CopiedRank copied;
  if (pages) {
    bulk->append_leaves(pages->path, pages->leaves);
    copied = CopiedRank{pages->calls, copy_rank_tiles_and_late_requests(merged), true};
  } else { // the rank's trace, stored as compact chunks, becomes rows here
    if (!why.empty()) {
      std::fprintf(stderr, "commlens: rank %d: its trace pages are not copied (%s); decoding its chunks\n",
                   rank.file.rank, why.c_str());
    }
    TraceRowWriter rows(merged, bulk, &tiles);
    TraceMaterializer(merged, "src", rank.file.rank, rank.map).run(rows);
    rows.flush();
    copied = CopiedRank{call_rows ? std::nullopt : std::optional(rows.calls()), rows.take_late_requests()};
  }
  materialize_nccl_calls(merged, "src", rank.file.rank);
  return copied;
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (const int rank : ranks) {
    text += (text.empty() ? "" : ",") + std::to_string(rank);
  }
  return text;
}

// Ranks whose clock offset is unknown: the offsets are measured at MPI_Finalize, so a rank that
// never got there (a crash, MPI_Abort) keeps offset 0. On rank 0's host that is right (one
// CLOCK_MONOTONIC for all processes, up to the tick rate's error); elsewhere it may not be.
std::vector<int> unaligned_ranks(SqliteDatabase& merged) {
  auto query = merged.prepare("SELECT rank FROM ranks WHERE finalized = 0 AND host IS NOT "
                              "(SELECT host FROM ranks ORDER BY rank LIMIT 1) ORDER BY rank");
  std::vector<int> ranks;
  while (query.step()) {
    ranks.push_back(static_cast<int>(query.column_int64(0)));
  }
  return ranks;
}

// Processes the run should have: every job the registry lists (even one whose rank files all
// failed to arrive), else the jobs the rank files describe, else run.world_size.
int expected_processes(SqliteDatabase& merged, const std::vector<JobEntry>& registered, int fallback) {
  auto add_job =
      merged.prepare("INSERT OR IGNORE INTO jobs (job, first_rank, size, spawned) VALUES (?,?,?,?)");
  for (const JobEntry& job : registered) {
    add_job.bind(1, std::int64_t{job.job})
        .bind(2, std::int64_t{job.first_rank})
        .bind(3, std::int64_t{job.size})
        .bind(4, std::int64_t{job.spawned})
        .run();
  }
  const std::int64_t in_jobs = merged.query_int64("SELECT COALESCE(MAX(first_rank + size), 0) FROM jobs");
  return in_jobs > 0 ? static_cast<int>(in_jobs) : fallback;
}

// The merged database is written under a name of its own and renamed to the output name once
// complete: a merge that crashes or fails leaves no file under the output name.
class PartialOutput {
public:
  explicit PartialOutput(std::string final_path)
      : final_path_(std::move(final_path)), path_(final_path_ + ".partial") {
    remove_with_journals(final_path_);
    remove_with_journals(path_);
  }
  ~PartialOutput() {
    if (!renamed_) {
      remove_with_journals(path_);
    }
  }
  PartialOutput(const PartialOutput&) = delete;
  PartialOutput& operator=(const PartialOutput&) = delete;

  const std::string& path() const { return path_; }
  void rename_to_final() {
    fs::rename(path_, final_path_);
    renamed_ = true;
  }

private:
  static void remove_with_journals(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal", "-bulk"}) {
      std::remove((path + suffix).c_str());
    }
  }
  std::string final_path_;
  std::string path_;
  bool renamed_ = false;
};

// The merged database's connection: no journal and no sync, as the file is not under its final
// name until it is complete. NOMUTEX: only this thread uses it.
SqliteDatabase open_merged(const std::string& path) {
  SqliteDatabase merged(path,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
  merged.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;");
  return merged;
}

// The trace rows' loader: pages written straight into the file where the file allows it, unless
// a rank file brings rows of its own (those are copied by INSERTs into the same tables).
std::unique_ptr<SqliteBulkLoader> open_bulk_loader(const SqliteDatabase& merged, const MergePlan& plan) {
  std::string why;
  return plan.has_row_tables ? nullptr : SqliteBulkLoader::open(merged, trace_row_tables(), why);
}

MergeResult merge_once(const MergeOptions& options, bool bulk_allowed) {
  const bool pages_allowed = options.use_rank_pages;
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const fs::path directory(options.directory);
  const std::vector<RankFile> files = find_rank_files(directory);
  MergeResult result;
  result.output_path =
      options.output_path.empty() ? (directory / "commlens.sqlite").string() : options.output_path;
  PartialOutput output(result.output_path);
  std::optional<SqliteDatabase> connection(open_merged(output.path()));
  // Still this connection's object after the bulk loader reopens the file (emplaced in place).
  SqliteDatabase& merged = *connection;
  merged.exec(fmt::format("PRAGMA application_id={}; PRAGMA user_version={};", schema::kApplicationId,
                          schema::kVersion));
  merged.exec(schema::kCreateTables);

  const auto plan_began = Clock::now();
  const MergePlan plan = plan_merge(merged, files, pages_allowed);
  result.missing_ranks = plan.unreadable_ranks;
  result.plan_seconds = seconds_since(plan_began);

  const auto rows_began = Clock::now();
  const std::unique_ptr<SqliteBulkLoader> bulk = bulk_allowed ? open_bulk_loader(merged, plan) : nullptr;
  // Its statements end before the connection closes for the bulk loader.
  std::optional<TimelineTileBuilder> tiles(std::in_place, merged, plan.tile_widths);
  bool call_rows_copied = false;
  std::uint64_t calls_written = 0; // of the ranks committed
  std::vector<RequestValues> late_requests;
  int done = static_cast<int>(plan.unreadable_ranks.size());
  for (const PlannedRank& rank : plan.ranks) {
    const RankFile& file = rank.file;
    bool attached = false;
    const std::optional<SqliteBulkLoader::Mark> rows_before =
        bulk ? std::optional(bulk->mark()) : std::nullopt;
    try {
      attach_rank_file(merged, file.path);
      attached = true;
      merged.exec("BEGIN");
      CopiedRank copied = copy_rank(merged, rank, plan, *tiles, bulk.get(), pages_allowed);
      merged.exec("COMMIT");
      call_rows_copied |= !copied.calls;
      calls_written += copied.calls.value_or(0);
      if (copied.from_rank_pages) {
        result.trace_pages_ranks.push_back(file.rank);
      }
      late_requests.insert(late_requests.end(), copied.late_requests.begin(), copied.late_requests.end());
      result.merged_ranks.push_back(file.rank);
    } catch (const SqliteError& error) {
      if (sqlite3_get_autocommit(merged.get()) == 0) {
        merged.exec("ROLLBACK");
      }
      tiles->discard();
      if (bulk) {
        bulk->rollback(*rows_before);
      }
      std::fprintf(stderr, "commlens: skipping %s: %s\n", file.path.string().c_str(), error.what());
      result.missing_ranks.push_back(file.rank);
    }
    if (attached) {
      merged.exec("DETACH DATABASE src");
    }
    if (options.progress) {
      options.progress(++done, static_cast<int>(files.size()));
    }
  }
  if (result.merged_ranks.empty()) {
    throw MergeError(
        fmt::format("{}: none of the {} rank files could be read", directory.string(), files.size()));
  }
  tiles.reset();
  if (bulk) { // the trace rows' pages go in with no connection open, then SQLite goes on
    connection.reset();
    bulk->install();
    connection.emplace(open_merged(output.path()));
    result.rows_as_pages = true;
    merged.exec("BEGIN");
    insert_requests(merged, late_requests);
    merged.exec("COMMIT");
  }
  result.calls = call_rows_copied
                     ? static_cast<std::uint64_t>(merged.query_int64("SELECT count(*) FROM mpi_call_rows"))
                     : calls_written;
  // The widths came from a bound on the calls: when the calls written give other widths, or when
  // the tiles did not see every call (rows a rank file carried), they are built from the merged calls.
  if (call_rows_copied ||
      choose_tile_widths(static_cast<std::int64_t>(result.calls), plan.rank_spans) != plan.tile_widths) {
    build_timeline_tiles(merged);
  }
  result.rows_seconds = seconds_since(rows_began);

  const std::string world_size = [&] {
    auto query = merged.prepare("SELECT value FROM run WHERE key = 'world_size'");
    return query.step() ? query.column_text(0) : std::string();
  }();
  result.world_size =
      expected_processes(merged, read_jobs(options.directory),
                         world_size.empty() ? result.merged_ranks.back() + 1 : std::stoi(world_size));
  for (int rank = 0; rank < result.world_size; ++rank) {
    const bool present = std::binary_search(result.merged_ranks.begin(), result.merged_ranks.end(), rank);
    const bool listed = std::find(result.missing_ranks.begin(), result.missing_ranks.end(), rank) !=
                        result.missing_ranks.end();
    if (!present && !listed) {
      result.missing_ranks.push_back(rank);
    }
  }
  std::sort(result.missing_ranks.begin(), result.missing_ranks.end());

  result.unaligned_ranks = unaligned_ranks(merged);
  if (!result.unaligned_ranks.empty()) {
    std::fprintf(
        stderr,
        "commlens: warning: ranks %s never finalized and ran on another host than rank 0: their "
        "clocks were never compared with rank 0's, so their times are taken as they are (offset 0)\n",
        join_ranks(result.unaligned_ranks).c_str());
  }
  { // the statement ends before the connection closes below
    auto set_value = merged.prepare("INSERT OR REPLACE INTO run VALUES (?, ?)");
    set_value.bind(1, std::string_view("merged_ranks"))
        .bind(2, std::to_string(result.merged_ranks.size()))
        .run();
    const std::string missing = join_ranks(result.missing_ranks);
    set_value.bind(1, std::string_view("missing_ranks")).bind(2, missing).run();
    set_value.bind(1, std::string_view("unaligned_ranks")).bind(2, join_ranks(result.unaligned_ranks)).run();
    set_value.bind(1, std::string_view("processes")).bind(2, std::to_string(result.world_size)).run();
    set_value.bind(1, std::string_view("trace_pages_ranks"))
        .bind(2, join_ranks(result.trace_pages_ranks))
        .run();
  }
  result.jobs = static_cast<int>(merged.query_int64("SELECT COUNT(*) FROM jobs"));
  result.dropped_events =
      static_cast<std::uint64_t>(merged.query_int64("SELECT COALESCE(sum(dropped_events), 0) FROM ranks"));
  result.summary_overflow =
      static_cast<std::uint64_t>(merged.query_int64("SELECT COALESCE(sum(summary_overflow), 0) FROM ranks"));
  merged.close();
  output.rename_to_final();
  if (options.remove_rank_files && result.missing_ranks.empty()) {
    for (const RankFile& file : files) {
      remove_rank_file(file.path.string());
    }
    // Every job's files are in the merged database: nothing is left for the registry to place.
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(options.directory) / kJobRegistryName, ignored);
    result.rank_files_removed = true;
  }
  return result;
}

} // namespace

MergeResult merge_rank_databases(const MergeOptions& options) {
  try {
    return merge_once(options, options.write_pages);
  } catch (const BulkOrderError&) {
    // Rows out of rowid order (no writer makes them): the pages cannot be written in order, so the
    // merge starts again with INSERTs, which take rows in any order.
    return merge_once(options, false);
  }
}

std::string describe_losses(const MergeResult& result) {
  std::vector<std::string> parts;
  if (!result.missing_ranks.empty()) {
    parts.push_back(fmt::format("{} of {} ranks missing", result.missing_ranks.size(), result.world_size));
  }
  if (result.dropped_events != 0) {
    parts.push_back(fmt::format("{} trace events dropped", result.dropped_events));
  }
  if (result.summary_overflow != 0) {
    parts.push_back(fmt::format("{} calls not counted (summary table full)", result.summary_overflow));
  }
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : ", ") + part;
  }
  return text.empty() ? text : "data lost: " + text;
}

} // namespace commlens
