#pragma once
// Schema v1 of commlens databases (per-rank files and the merged file share it). The table and
// column names are a public interface (docs/schema.md): users query them with SQL, so they change
// only by adding. PRAGMA user_version holds the version, PRAGMA application_id marks the file as ours.
#include <cstdint>
#include <string_view>

namespace commlens::schema {

inline constexpr int kVersion = 1;
inline constexpr std::int32_t kApplicationId = 0x436C4E53; // "ClNS"

// Tables, enum tables and their fixed rows. Safe to run on an existing v1 database.
extern const std::string_view kCreateTables;
// Indexes for analysis; created on the merged database only, so per-rank writes stay cheap.
extern const std::string_view kCreateAnalysisIndexes;

// Values of mpi_calls.buffer_location (also in the buffer_locations table).
enum class BufferLocationCode : int { Unknown = 0, Host = 1, Device = 2, Managed = 3 };

} // namespace commlens::schema
