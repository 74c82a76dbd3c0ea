#pragma once
// Thin RAII wrappers over the SQLite C API: one place that turns return codes into exceptions
// naming the database file, so callers never see a raw error code.
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace commlens {

struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class SqliteStatement {
public:
  SqliteStatement() = default;
  SqliteStatement(sqlite3* db, std::string_view sql);
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite.
  SqliteStatement& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(statement_, index, value);
    return *this;
  }
  SqliteStatement& bind(int index, double value) {
    sqlite3_bind_double(statement_, index, value);
    return *this;
  }
  SqliteStatement& bind(int index, std::string_view value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqliteStatement& bind_null(int index) {
    sqlite3_bind_null(statement_, index);
    return *this;
  }
  // Integers of any width (unsigned ones are stored as their 64-bit pattern); nullopt binds NULL.
  template <typename Integer> SqliteStatement& bind_integer(int index, std::optional<Integer> value) {
    return value ? bind(index, static_cast<std::int64_t>(*value)) : bind_null(index);
  }
  // Steps once: true when a row is ready, false when done. Throws on error.
  bool step();
  // Runs to completion and resets for the next set of bindings.
  void run();
  void reset() { sqlite3_reset(statement_); }

  std::int64_t column_int64(int column) const { return sqlite3_column_int64(statement_, column); }
  double column_double(int column) const { return sqlite3_column_double(statement_, column); }
  bool column_is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string column_text(int column) const;
  sqlite3_stmt* get() const noexcept { return statement_; }

private:
  sqlite3_stmt* statement_ = nullptr;
};

class SqliteDatabase {
public:
  // flags as for sqlite3_open_v2. Throws SqliteError naming the path.
  SqliteDatabase(const std::string& path, int flags);
  SqliteDatabase(SqliteDatabase&& other) noexcept;
  SqliteDatabase& operator=(SqliteDatabase&&) = delete;
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;
  ~SqliteDatabase();

  void exec(std::string_view sql);
  SqliteStatement prepare(std::string_view sql) const { return SqliteStatement(db_, sql); }
  std::int64_t query_int64(std::string_view sql) const; // first column of the first row, 0 if none
  sqlite3* get() const noexcept { return db_; }
  const std::string& path() const noexcept { return path_; }
  void close();

private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

} // namespace commlens
