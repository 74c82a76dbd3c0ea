#pragma once
// Schema v1 of commlens databases (per-rank files and the merged file share it). The table and
// column names are a public interface (docs/schema.md): users query them with SQL, so they change
// only by adding. PRAGMA user_version holds the version, PRAGMA application_id marks the file as ours.
#include <cstdint>
#include <span>
#include <string_view>

namespace commlens::schema {

inline constexpr int kVersion = 1;
inline constexpr std::int32_t kApplicationId = 0x436C4E53; // "ClNS"

// Tables, enum tables and their fixed rows. Safe to run on an existing v1 database.
extern const std::string_view kCreateTables;

// How the merge copies each table from a rank file. Tables not listed (trace_chunks) are not
// copied. A collector that adds a table adds its rule here.
struct TableMerge {
  const char* table;
  bool first_rank_wins;          // shared catalogues (functions, run): the first rank's copy is kept
  const char* timestamp_columns; // comma-separated columns moved onto rank 0's timeline; "" for none
};
extern const std::span<const TableMerge> kTableMerges;

// Values of mpi_calls.buffer_location (also in the buffer_locations table).
enum class BufferLocationCode : int { Unknown = 0, Host = 1, Device = 2, Managed = 3 };

} // namespace commlens::schema
