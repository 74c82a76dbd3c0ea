#pragma once
// What a part of a job's merge tree (merge_parts.hpp) holds besides the merged schema's tables
// (docs/schema.md, "Part files"): one row per rank it took, saying where the rank's trace leaves
// are and what the final merge needs of them; the rows its ranks' pages could not take in rowid
// order; and the ranks it could not take, with the place their files stay. This per-rank index is
// all of a part that a merge keeps in memory.
#include "commlens/profiler/merge.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "sqlite_bulk_table.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commlens::merge_part {

inline constexpr const char* kCreateTables = R"sql(
CREATE TABLE merge_part_ranks (
  rank          INTEGER PRIMARY KEY,
  place         TEXT NOT NULL,
  pages_file    TEXT,
  calls         INTEGER NOT NULL,
  calls_at_most INTEGER NOT NULL,
  span_start_ns INTEGER,
  span_end_ns   INTEGER,
  pages         INTEGER NOT NULL,
  leaves        BLOB,
  own_pages     INTEGER NOT NULL
);
CREATE TABLE merge_part_late_calls AS SELECT * FROM mpi_call_rows WHERE 0;
CREATE TABLE merge_part_late_requests AS SELECT * FROM mpi_request_rows WHERE 0;
CREATE TABLE merge_part_left_behind (
  rank  INTEGER PRIMARY KEY,
  place TEXT NOT NULL
);
)sql";
// The late rows' tables (trace_rows.hpp, store_late_rows).
inline constexpr const char* kLateRows = "merge_part_late";
// What the run's database, started as a part's file, drops once it has read them.
inline constexpr const char* kDropTables = R"sql(
DROP TABLE merge_part_ranks;
DROP TABLE merge_part_late_calls;
DROP TABLE merge_part_late_requests;
DROP TABLE merge_part_left_behind;
)sql";

// One rank of a part.
struct RankEntry {
  int rank = 0;
  std::string place;      // host:/folder of its rank file
  std::string pages_path; // its leaves (empty: no trace)
  std::uint64_t calls = 0;
  TraceExtent extent;
  SqliteBulkLoader::SavedLeaves leaves;
  bool own_pages = false; // encoded by the rank at MPI_Finalize; else by the merge from its chunks
};

// Writes the entries into db's merge_part_ranks, pages files as names relative to `folder` where
// they lie in it.
void write_ranks(const SqliteDatabase& db, const std::vector<RankEntry>& entries, const std::string& folder);
// The entries of schema's merge_part_ranks, relative pages files resolved against `folder`.
std::vector<RankEntry> read_ranks(const SqliteDatabase& db, const std::string& schema,
                                  const std::string& folder);

void write_left_behind(const SqliteDatabase& db, const std::vector<RanksLeftBehind>& left_behind);
std::vector<RanksLeftBehind> read_left_behind(const SqliteDatabase& db, const std::string& schema);

// Adds `ranks` at `place` to a list, joining them to an entry of the same place.
void add_left_behind(std::vector<RanksLeftBehind>& list, const std::vector<int>& ranks,
                     const std::string& place);

} // namespace commlens::merge_part
