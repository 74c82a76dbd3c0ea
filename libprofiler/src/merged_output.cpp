#include "merged_output.hpp"

#include "commlens/profiler/job_registry.hpp"
#include "commlens/profiler/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace commlens {

namespace {

std::string mapped(const char* column, const ClockMap& map) {
  return fmt::format("({0} + ({1}) - CAST({0} * ({2:.17g}) AS INTEGER))", column, map.shift, map.drift);
}

// "(columns) SELECT values" copying src.`table`, with timestamp columns moved onto rank 0's
// timeline; empty when the rank file has no such table (written by an older commlens).
std::string copy_clause(SqliteDatabase& merged, const schema::TableMerge& rule, const ClockMap& map) {
  const std::string timestamps = std::string(",") + rule.timestamp_columns + ",";
  const bool moved = map.shift != 0 || map.drift != 0.0;
  auto columns = merged.prepare(fmt::format("PRAGMA src.table_info({})", rule.table));
  std::string names;
  std::string values;
  while (columns.step()) {
    const std::string column = columns.column_text(1);
    const char* separator = names.empty() ? "" : ", ";
    names += separator + column;
    values += separator;
    values += moved && timestamps.find("," + column + ",") != std::string::npos ? mapped(column.c_str(), map)
                                                                                : column;
  }
  return names.empty() ? "" : fmt::format("({}) SELECT {} FROM src.{}", names, values, rule.table);
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

// Processes the run should have: every job the registries list (even one whose rank files all
// failed to arrive), else the jobs the rank files describe, else `fallback`.
int expected_processes(SqliteDatabase& merged, const std::vector<std::string>& registry_directories,
                       int fallback) {
  auto add_job =
      merged.prepare("INSERT OR IGNORE INTO jobs (job, first_rank, size, spawned) VALUES (?,?,?,?)");
  for (const std::string& directory : registry_directories) {
    for (const JobEntry& job : read_jobs(directory)) {
      add_job.bind(1, std::int64_t{job.job})
          .bind(2, std::int64_t{job.first_rank})
          .bind(3, std::int64_t{job.size})
          .bind(4, std::int64_t{job.spawned})
          .run();
    }
  }
  const std::int64_t in_jobs = merged.query_int64("SELECT COALESCE(MAX(first_rank + size), 0) FROM jobs");
  return in_jobs > 0 ? static_cast<int>(in_jobs) : fallback;
}

} // namespace

PartialOutput::PartialOutput(std::string final_path)
    : final_path_(std::move(final_path)), path_(final_path_ + ".partial") {
  remove_with_journals(final_path_);
  remove_with_journals(path_);
}

PartialOutput::~PartialOutput() {
  if (!renamed_) {
    remove_with_journals(path_);
  }
}

void PartialOutput::rename_to_final() {
  std::filesystem::rename(path_, final_path_);
  renamed_ = true;
}

void remove_with_journals(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal", "-bulk"}) {
    std::remove((path + suffix).c_str());
  }
}

SqliteDatabase open_merged(const std::string& path) {
  SqliteDatabase merged(path,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
  merged.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;");
  return merged;
}

void create_merged_schema(SqliteDatabase& merged) {
  merged.exec(fmt::format("PRAGMA application_id={}; PRAGMA user_version={};", schema::kApplicationId,
                          schema::kVersion));
  merged.exec(schema::kCreateTables);
}

MergedFile::MergedFile(const MergeOptions& options, const std::string& directory,
                       const std::string& start_from)
    : final_path_(final_path_for(options, directory)), output_(final_path_) {
  if (!start_from.empty()) {
    std::filesystem::rename(start_from, output_.path());
  }
  connection_.emplace(open_merged(output_.path()));
  create_merged_schema(*connection_); // CREATE ... IF NOT EXISTS: a file started from keeps its rows
}

std::string MergedFile::final_path_for(const MergeOptions& options, const std::string& directory) {
  return options.output_path.empty() ? (std::filesystem::path(directory) / "commlens.sqlite").string()
                                     : options.output_path;
}

void MergedFile::install(SqliteBulkLoader& bulk, const LateRows& late_rows) {
  connection_.reset();
  bulk.install();
  connection_.emplace(open_merged(output_.path()));
  connection_->exec("BEGIN");
  insert_late_rows(*connection_, late_rows);
  connection_->exec("COMMIT");
}

void MergedFile::finish() {
  connection_->close();
  output_.rename_to_final();
}

void copy_attached_tables(SqliteDatabase& merged, const ClockMap& map, bool source_comes_first) {
  for (const schema::TableMerge& rule : schema::kTableMerges) {
    const std::string clause = copy_clause(merged, rule, map);
    if (!clause.empty()) {
      merged.exec(fmt::format("INSERT OR {} INTO {} {}",
                              rule.first_rank_wins && !source_comes_first ? "IGNORE" : "REPLACE", rule.table,
                              clause));
    }
  }
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (const int rank : ranks) {
    text += (text.empty() ? "" : ",") + std::to_string(rank);
  }
  return text;
}

void record_run_values(SqliteDatabase& merged, const std::vector<std::string>& registry_directories,
                       MergeResult& result) {
  const std::string world_size = [&] {
    auto query = merged.prepare("SELECT value FROM run WHERE key = 'world_size'");
    return query.step() ? query.column_text(0) : std::string();
  }();
  std::sort(result.merged_ranks.begin(), result.merged_ranks.end());
  result.world_size =
      expected_processes(merged, registry_directories,
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
  auto set_value = merged.prepare("INSERT OR REPLACE INTO run VALUES (?, ?)");
  const auto set = [&set_value](std::string_view key, const std::string& value) {
    set_value.bind(1, key).bind(2, value).run();
  };
  set("merged_ranks", std::to_string(result.merged_ranks.size()));
  set("missing_ranks", join_ranks(result.missing_ranks));
  set("unaligned_ranks", join_ranks(result.unaligned_ranks));
  set("processes", std::to_string(result.world_size));
  set("trace_pages_ranks", join_ranks(result.trace_pages_ranks));
  result.jobs = static_cast<int>(merged.query_int64("SELECT COUNT(*) FROM jobs"));
  result.dropped_events =
      static_cast<std::uint64_t>(merged.query_int64("SELECT COALESCE(sum(dropped_events), 0) FROM ranks"));
  result.summary_overflow =
      static_cast<std::uint64_t>(merged.query_int64("SELECT COALESCE(sum(summary_overflow), 0) FROM ranks"));
}

} // namespace commlens
