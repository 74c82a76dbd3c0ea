#include "commlens/analysis/database.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/profiler/schema.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <utility>

namespace commlens::analysis {
namespace {

// The tables reports read; a file without them is a half-written or hand-made database.
constexpr std::array kRequiredTables = {"run", "ranks", "functions", "phases", "call_stats"};

constexpr std::size_t kSqliteHeaderBytes = 100;
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

std::uint32_t big_endian(const unsigned char* bytes, int width) {
  std::uint32_t value = 0;
  for (int i = 0; i < width; ++i)
    value = (value << 8) | bytes[i];
  return value;
}

// SQLite itself treats an empty or short file as a new database and reports a truncated one only
// when a query reaches a missing page, so the header is checked here to name the problem up front.
void check_sqlite_file_header(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw DatabaseError(path, "no such file");
  if (std::filesystem::is_directory(path, error))
    throw DatabaseError(path, "is a directory, not a database file");
  const auto file_bytes = std::filesystem::file_size(path, error);
  if (error)
    throw DatabaseError(path, "cannot read file size (" + error.message() + ")");
  if (file_bytes == 0)
    throw DatabaseError(path, "empty file, not a SQLite database");

  std::array<unsigned char, kSqliteHeaderBytes> header{};
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw DatabaseError(path, "cannot open for reading");
  file.read(reinterpret_cast<char*>(header.data()), header.size());
  const auto header_bytes = static_cast<std::size_t>(file.gcount());
  if (std::string_view(reinterpret_cast<const char*>(header.data()),
                       std::min(header_bytes, kSqliteMagic.size())) != kSqliteMagic)
    throw DatabaseError(path, "not a SQLite database (bad file header)");
  if (header_bytes < kSqliteHeaderBytes)
    throw DatabaseError(path, fmt::format("truncated: {} bytes, shorter than a SQLite header", file_bytes));

  std::uint32_t page_size = big_endian(&header[16], 2);
  if (page_size == 1) // the encoding of 65536
    page_size = 65536;
  const auto page_count = big_endian(&header[28], 4);
  // The page count is only trustworthy when "version-valid-for" matches the change counter.
  const bool page_count_valid = big_endian(&header[92], 4) == big_endian(&header[24], 4);
  const auto expected_bytes = std::uintmax_t{page_size} * page_count;
  if (page_count_valid && file_bytes < expected_bytes)
    throw DatabaseError(path,
                        fmt::format("truncated: {} bytes on disk, the SQLite header says {} ({} pages of {})",
                                    file_bytes, expected_bytes, page_count, page_size));
}

SqliteDatabase open_read_only(const std::filesystem::path& path) {
  check_sqlite_file_header(path);
  try {
    // NOMUTEX: a connection is used by one thread at a time (the viewer gives its timeline fetcher
    // a connection of its own), so SQLite's per-call locking is pure cost: a fifth of the time
    // spent reading ten million rows went into locking and unlocking it.
    return SqliteDatabase(path.string(), SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  } catch (const SqliteError& error) {
    throw DatabaseError(path, std::string("cannot open (") + error.what() + ")");
  }
}

} // namespace

Database::Database(std::filesystem::path path) : path_(std::move(path)), connection_(open_read_only(path_)) {
  validate();
}

Statement Database::prepare(std::string_view sql) const {
  return Statement(connection_.get(), sql, path_);
}

bool Database::has_table(std::string_view name) const {
  auto query = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1");
  query.bind(1, name);
  return query.step();
}

bool Database::has_column(std::string_view table, std::string_view column) const {
  auto query = prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  query.bind(1, table);
  query.bind(2, column);
  return query.step();
}

bool Database::has_rows(std::string_view name) const {
  if (!has_table(name))
    return false;
  // The name comes from has_table's check against sqlite_master, so quoting it is enough.
  auto query = prepare(fmt::format("SELECT 1 FROM \"{}\" LIMIT 1", name));
  return query.step();
}

void Database::require_events() const {
  if (!has_rows("call_stats") && !has_rows("mpi_calls"))
    throw DatabaseError(path_, "no MPI calls recorded (zero events): nothing to analyse");
}

std::vector<int> Database::missing_ranks() const {
  auto query = prepare(R"sql(
WITH RECURSIVE expected(rank) AS (
  SELECT 0 WHERE EXISTS (SELECT 1 FROM run WHERE key = 'merged_ranks')
  UNION ALL
  SELECT rank + 1 FROM expected WHERE rank + 1 < CAST(COALESCE((SELECT value FROM run WHERE key = 'processes'),
                                                                  (SELECT value FROM run WHERE key = 'world_size')) AS INTEGER))
SELECT rank FROM expected WHERE rank NOT IN (SELECT rank FROM ranks) ORDER BY rank)sql");
  std::vector<int> missing;
  while (query.step())
    missing.push_back(static_cast<int>(query.integer(0)));
  return missing;
}

int Database::world_size() const {
  auto query = prepare("SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM run WHERE key = 'processes'), "
                       "(SELECT CAST(value AS INTEGER) FROM run WHERE key = 'world_size'), "
                       "(SELECT COUNT(*) FROM ranks))");
  query.step();
  return static_cast<int>(query.integer(0));
}

void Database::require_all_ranks() const {
  const auto missing = missing_ranks();
  if (missing.empty())
    return;
  constexpr std::size_t kRanksNamed = 10; // the message stays one readable line
  const auto named =
      std::vector<int>(missing.begin(), missing.begin() + std::min(missing.size(), kRanksNamed));
  const auto list = missing.size() > kRanksNamed
                        ? fmt::format("{}, ... ({} in all)", fmt::join(named, ", "), missing.size())
                        : fmt::format("{}", fmt::join(named, ", "));
  const int world = world_size();
  throw DatabaseError(path_,
                      fmt::format("incomplete run: rank{} {} of {} missing (rank file never arrived or "
                                  "could not be merged); --allow-missing-ranks analyses the {} present",
                                  missing.size() > 1 ? "s" : "", list, world,
                                  world - static_cast<int>(missing.size())));
}

void Database::validate() {
  auto application_id_query = prepare("PRAGMA application_id");
  application_id_query.step();
  const auto application_id = static_cast<std::int32_t>(application_id_query.integer(0));
  if (application_id != schema::kApplicationId)
    throw DatabaseError(path_,
                        fmt::format("not a commlens database (application_id {:#010x}, expected {:#010x})",
                                    static_cast<std::uint32_t>(application_id),
                                    static_cast<std::uint32_t>(schema::kApplicationId)));

  auto version_query = prepare("PRAGMA user_version");
  version_query.step();
  schema_version_ = static_cast<int>(version_query.integer(0));
  if (schema_version_ > schema::kVersion)
    throw DatabaseError(path_, fmt::format("schema version {} is newer than this commlens supports ({}); "
                                           "read it with a newer commlens",
                                           schema_version_, schema::kVersion));
  if (schema_version_ < 1)
    throw DatabaseError(path_, fmt::format("no commlens schema version (user_version {}); the file was "
                                           "never completely written",
                                           schema_version_));

  for (const auto* table : kRequiredTables)
    if (!has_table(table))
      throw DatabaseError(path_, fmt::format("incomplete commlens database: table '{}' is missing", table));
}

} // namespace commlens::analysis
