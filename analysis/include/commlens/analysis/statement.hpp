#pragma once
// A prepared SQLite statement over a read-only commlens database. Query code reads rows one at a
// time (streaming), so reports stay bounded in memory however large the database is. The SQLite
// work is libprofiler's SqliteStatement; this class only turns its SqliteError into the
// DatabaseError the analysis layer promises (one line naming the file, corruption said as such).
#include "commlens/profiler/sqlite.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace commlens::analysis {

class Statement {
public:
  // Throws DatabaseError naming `path` if the SQL cannot be prepared (for example a missing table).
  Statement(sqlite3* database, std::string_view sql, const std::filesystem::path& path);

  // Parameters are numbered from 1, as in SQL (?1); nullopt binds NULL.
  Statement& bind(int index, std::optional<std::int64_t> value);
  Statement& bind(int index, std::string_view value);

  // Advances to the next row; false when there are no more. Throws DatabaseError on failure, so a
  // corrupt page met in the middle of a query is reported like one found at open.
  bool step();
  // Makes the statement ready to run again, keeping its bindings (repeated inserts).
  void reset();

  // Columns are numbered from 0, as SQLite does.
  std::int64_t integer(int column) const;
  std::optional<std::int64_t> optional_integer(int column) const;
  double real(int column) const;
  std::optional<double> optional_real(int column) const;
  std::string text(int column) const; // a BLOB's raw bytes
  std::optional<std::string> optional_text(int column) const;
  int column_count() const;
  std::string column_name(int column) const;
  bool is_blob(int column) const;

private:
  sqlite3* database_;
  std::filesystem::path path_;
  SqliteStatement statement_;
};

} // namespace commlens::analysis
