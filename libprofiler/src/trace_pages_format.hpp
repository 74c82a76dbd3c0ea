#pragma once
// What a rank file records about the pages it encoded at MPI_Finalize (trace_pages.hpp), shared by
// the rank that writes it and the merge that checks it: the table trace_pages (one row), the
// leaves' rowids as a BLOB, and the facts the pages depend on, so that pages made for another
// plan (another clock map, tile widths or page shape) or other chunks are never copied.
#include "commlens/profiler/sqlite.hpp"
#include "sqlite_bulk_table.hpp"
#include "trace_materializer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace commlens::trace_pages {

// Raised whenever what the row holds, or how the pages are made, changes meaning (2: the calls
// the pages could not take in rowid order are kept in trace_pages_late_calls).
inline constexpr std::int64_t kFormat = 2;

// Documented in docs/schema.md ("Rank files"). The late rows (trace_rows.hpp) are in the tables
// of prefix kLateRows.
inline constexpr const char* kCreateTables = R"sql(
DROP TABLE IF EXISTS trace_pages;
DROP TABLE IF EXISTS trace_pages_late_calls;
DROP TABLE IF EXISTS trace_pages_late_requests;
CREATE TABLE trace_pages (
  format         INTEGER NOT NULL,
  page_size      INTEGER NOT NULL,
  usable_size    INTEGER NOT NULL,
  clock_shift_ns INTEGER NOT NULL,
  clock_drift    REAL NOT NULL,
  last_chunk     INTEGER NOT NULL,
  calls_at_most  INTEGER NOT NULL,
  span_start_ns  INTEGER,
  span_end_ns    INTEGER,
  pages          INTEGER NOT NULL,
  page_check     INTEGER NOT NULL,
  calls          INTEGER NOT NULL,
  leaves         BLOB NOT NULL
);
CREATE TABLE trace_pages_late_calls AS SELECT * FROM mpi_call_rows WHERE 0;
CREATE TABLE trace_pages_late_requests AS SELECT * FROM mpi_request_rows WHERE 0;
)sql";

// The last of trace_chunks' ids (0 for none), found by one seek. Chunks are only ever appended, so
// pages encoded from other chunks than the file now holds had another last id.
inline constexpr const char* kLateRows = "trace_pages_late";

std::int64_t last_chunk(const SqliteDatabase& db, const std::string& schema);

// The leaves of a loader's tables as a BLOB (64-bit little-endian integers), and back; nullopt
// when the BLOB does not describe leaves of a file of `pages` pages.
std::vector<std::uint8_t> encode_leaves(const SqliteBulkLoader::SavedLeaves& leaves);
std::optional<std::vector<SqliteBulkLoader::SavedTable>> decode_leaves(std::span<const std::uint8_t> bytes,
                                                                       std::uint64_t pages);

struct Record {
  std::int64_t page_size = 0, usable_size = 0;
  ClockMap map;
  std::int64_t last_chunk = 0;
  TraceMaterializer::Extent extent; // on that map: what the merge plan would find
  std::int64_t page_check = 0;
  std::uint64_t calls = 0;
  SqliteBulkLoader::SavedLeaves leaves;
};
void write_record(const SqliteDatabase& db, const Record& record);
// schema's trace_pages row; nullopt when there is none or it is of another format.
std::optional<Record> read_record(const SqliteDatabase& db, const std::string& schema);

// A check of the pages file against a stale one: FNV-1a of its first and last pages (0 for none).
std::int64_t page_check(const std::string& path, std::uint64_t pages, std::size_t page_size);

} // namespace commlens::trace_pages
